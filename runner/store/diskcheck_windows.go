package store

// whyUnwritable is not looked for on Windows, where runs are refused.
func whyUnwritable(string) (problem, detail string) { return "", "" }
