package store

// SetScanBudget sets how many index entries a page of a status reads at
// most, until the returned function restores it.
func SetScanBudget(n int) (restore func()) {
	old := scanBudget
	scanBudget = n
	return func() { scanBudget = old }
}
