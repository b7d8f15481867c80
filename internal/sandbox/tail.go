package sandbox

// LogTail is what a server log says of how its server ended, as one line:
// the lines that explain it, or its last n lines (" | " joined; "" for a
// log that is not there). A fleet job that failed keeps it in its error.
func LogTail(path string, n int) string { return logTail(path, n) }
