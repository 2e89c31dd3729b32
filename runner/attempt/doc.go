// Package attempt holds the rules of one attempt of an agent at a cue that
// every engine applies alike (the local runner, its drivers, and
// engine/temporal's workers): the GO task (PlanTask, WithBoard, the form
// coord.go carries), the environment (the agent's env, the ORCH_*
// variables, ORCH_INPUT_* and ORCH_ITEM with large values in files), what
// an attempt delivers (ORCH_OUTPUT, a coding agent's reply, the provides
// contract), the timeouts of its phases and the kill grace, its working
// directory, the prompt a coding agent is given, and the classified
// Failure an attempt ends with. It does no I/O beyond the files of an
// attempt's inputs and outputs, and holds no state.
package attempt
