// Package gcsettings sets the Go garbage collector's targets for the FerretDB
// process (infra/ferretdb/README.md says why they are not Go's defaults).
package gcsettings

import (
	"fmt"
	"os"
	"runtime/debug"
)

// DefaultPercent: FerretDB decodes and re-encodes every document it touches, so it
// allocates at a high rate over a small live heap (≈ 15 MB). At Go's default
// of 100 the collector ran so often that it was the largest single cost of a
// record update; at 400 an update by `_id` of an email record cost ≈ 350 µs
// of CPU instead of ≈ 485 (2,000 records updated five times in bulks of 25),
// for ≈ 18 MB more resident memory (40 → 58 MB).
const DefaultPercent = 400

// DefaultMemoryLimitMB bounds what the higher target may cost: a heap that
// grows towards it (a large scan) is collected as often as it takes to stay
// under it, whatever the target says (Go's soft memory limit).
const DefaultMemoryLimitMB = 1024

// Apply sets percent as the collector's target and limitMB as its soft
// memory limit, each unless its variable (GOGC, GOMEMLIMIT) already set it:
// Go reads them at start, and an operator's choice wins. It returns the
// target and the limit (bytes) in effect.
func Apply(percent int, limitMB int64) (int, int64, error) {
	if percent <= 0 {
		return 0, 0, fmt.Errorf("gc percent %d is not a positive percentage", percent)
	}
	if limitMB <= 0 {
		return 0, 0, fmt.Errorf("memory limit %d MB is not a positive size", limitMB)
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(percent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(limitMB << 20)
	}
	current := debug.SetGCPercent(-1)
	debug.SetGCPercent(current)
	return current, debug.SetMemoryLimit(-1), nil
}
