// Package gcpercent sets the Go garbage collector's target for the FerretDB
// process (infra/ferretdb/README.md says why it is not Go's default).
package gcpercent

import (
	"fmt"
	"os"
	"runtime/debug"
)

// Default: FerretDB decodes and re-encodes every document it touches, so it
// allocates at a high rate over a small live heap (≈ 15 MB). At Go's default
// of 100 the collector ran so often that it was the largest single cost of a
// record update; at 400 an update by `_id` of an email record cost ≈ 350 µs
// of CPU instead of ≈ 485 (2,000 records updated five times in bulks of 25),
// for ≈ 18 MB more resident memory (40 → 58 MB).
const Default = 400

// Apply sets percent as the collector's target unless the GOGC variable set
// one (Go reads it at start, and an operator's choice wins). It returns the
// target in effect.
func Apply(percent int) (int, error) {
	if _, set := os.LookupEnv("GOGC"); set {
		current := debug.SetGCPercent(-1)
		debug.SetGCPercent(current)
		return current, nil
	}
	if percent <= 0 {
		return 0, fmt.Errorf("%d is not a positive percentage", percent)
	}
	debug.SetGCPercent(percent)
	return percent, nil
}
