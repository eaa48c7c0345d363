package gcsettings

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

// restore puts the collector's settings back after a test, and runs it without
// GOGC and GOMEMLIMIT unless it sets them itself.
func restore(t *testing.T) {
	percent := debug.SetGCPercent(-1)
	debug.SetGCPercent(percent)
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		if value, set := os.LookupEnv(name); set {
			t.Setenv(name, value) // restored after the test
			os.Unsetenv(name)
		}
	}
}

func TestAppliesTheGivenTargetsWithoutTheVariables(t *testing.T) {
	restore(t)
	percent, limit, err := Apply(DefaultPercent, DefaultMemoryLimitMB)
	if err != nil || percent != DefaultPercent || limit != DefaultMemoryLimitMB<<20 {
		t.Fatalf("Apply = %d, %d, %v", percent, limit, err)
	}
	if current := debug.SetGCPercent(DefaultPercent); current != DefaultPercent {
		t.Fatalf("collector target %d, want %d", current, DefaultPercent)
	}
	if current := debug.SetMemoryLimit(-1); current != DefaultMemoryLimitMB<<20 {
		t.Fatalf("memory limit %d, want %d", current, DefaultMemoryLimitMB<<20)
	}
}

func TestTheVariablesWin(t *testing.T) {
	restore(t)
	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "off")
	// As Go's runtime did at start from the variables.
	debug.SetGCPercent(150)
	debug.SetMemoryLimit(math.MaxInt64)
	percent, limit, err := Apply(DefaultPercent, DefaultMemoryLimitMB)
	if err != nil || percent != 150 || limit != math.MaxInt64 {
		t.Fatalf("Apply with GOGC=150 GOMEMLIMIT=off = %d, %d, %v", percent, limit, err)
	}
}

func TestRefusesNonPositiveSettings(t *testing.T) {
	restore(t)
	if _, _, err := Apply(0, DefaultMemoryLimitMB); err == nil {
		t.Fatal("Apply(0, …) succeeded")
	}
	if _, _, err := Apply(DefaultPercent, 0); err == nil {
		t.Fatal("Apply(…, 0) succeeded")
	}
}
