package app

import "time"

// SetKeeperClock replaces k's clock (time.Now) before k starts keeping
// anything: the tests count how often the keeper looks at the time.
func SetKeeperClock(k *Keeper, now func() time.Time) { k.now = now }
