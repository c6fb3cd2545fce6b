package shooter

import "testing"

// HitScan aims at the nearest other ship (the lower player on a tie,
// never the shooter's own) and hits within ScanRange.
func TestHitScan(t *testing.T) {
	own := Body{X: 1000, Y: 1000}
	others := []Target{
		{Player: 1, Body: own}, // the shooter itself
		{Player: 5, Body: Body{X: 1000 + ScanRange - 1, Y: 1000}},
		{Player: 3, Body: Body{X: 1000, Y: 1000 - (ScanRange - 1)}},
		{Player: 4, Body: Body{X: 3000, Y: 3000}},
	}
	r := HitScan(1, 24, own, others)
	if r != (ScanResult{Player: 1, Tick: 24, Target: 3, Hit: true}) {
		t.Fatalf("HitScan = %+v, want player 3 hit (nearest, tie by player)", r)
	}
	others[1].Body.X, others[2].Body.Y = 1000+ScanRange, 1000-ScanRange
	if r := HitScan(1, 24, own, others); r.Target != 3 || r.Hit {
		t.Fatalf("at ScanRange: %+v, want a miss of player 3", r)
	}
	if r := HitScan(1, 24, own, others[:1]); r.Target != 0 || r.Hit {
		t.Fatalf("alone: %+v, want no target", r)
	}
	if !Scans(Stick{Buttons: Scan}, ScanEvery*3) || Scans(Stick{Buttons: Scan}, ScanEvery*3+1) || Scans(Stick{}, 0) {
		t.Fatal("Scans does not follow ScanEvery and the Scan button")
	}
}
