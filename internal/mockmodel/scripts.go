package mockmodel

// Standard are the scripts the end-to-end tests and the mockmodel command
// share. Each final reply ends with the JSON object orch reads outputs
// from.
var Standard = map[string]Script{
	// reply answers at once.
	"reply": {{Text: "Nothing to change.\n{\"summary\": \"replied\"}", InputTokens: 120, OutputTokens: 12}},
	// write creates hello.txt with the CLI's edit tool.
	"write": {
		{Text: "I will write hello.txt.", Write: &File{Path: "hello.txt", Content: "hello from the mock model\n"}, InputTokens: 100, OutputTokens: 20},
		{Text: "Wrote hello.txt.\n{\"summary\": \"wrote hello.txt\"}", InputTokens: 150, OutputTokens: 15},
	},
	// shell runs a command that writes shell.txt.
	"shell": {
		{Text: "I will run a command.", Shell: "echo shell was here > shell.txt", InputTokens: 100, OutputTokens: 20},
		{Text: "Ran it.\n{\"summary\": \"ran a command\"}", InputTokens: 150, OutputTokens: 15},
	},
	// write-shell writes hello.txt, then runs a command (an edit, then an
	// execute: two permission kinds).
	"write-shell": {
		{Text: "I will write hello.txt.", Write: &File{Path: "hello.txt", Content: "hello from the mock model\n"}, InputTokens: 100, OutputTokens: 20},
		{Text: "Now a command.", Shell: "echo shell was here > shell.txt", InputTokens: 150, OutputTokens: 20},
		{Text: "Done.\n{\"summary\": \"wrote hello.txt, ran a command\"}", InputTokens: 200, OutputTokens: 15},
	},
}
