package runner

// jsonlDriver speaks the cue protocol to a protocol: jsonl agent. (Filled in
// with the protocols package.)
type jsonlDriver struct{}

func (d *jsonlDriver) warning(a *attempt) *failure {
	return failf("start", "jsonl agents are not supported yet")
}
func (d *jsonlDriver) standby(a *attempt) *failure { return nil }
func (d *jsonlDriver) work(a *attempt, t *Task) (map[string]any, *failure) {
	return nil, nil
}
func (d *jsonlDriver) close(a *attempt) (int, *int) { return 0, nil }
