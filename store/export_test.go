package store

// SetScanBudget sets how many index entries a page of a status reads at
// most, until the returned function restores it.
func SetScanBudget(n int) (restore func()) {
	old := scanBudget
	scanBudget = n
	return func() { scanBudget = old }
}

// SetFewPending sets the backlog up to which a page of pending questions
// reads every one's number, until the returned function restores it.
func SetFewPending(n int) (restore func()) {
	old := fewPending
	fewPending = n
	return func() { fewPending = old }
}
