package gcpercent

import (
	"os"
	"runtime/debug"
	"testing"
)

func restore(t *testing.T) {
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	t.Cleanup(func() { debug.SetGCPercent(before) })
}

func TestAppliesTheGivenPercentWithoutGOGC(t *testing.T) {
	restore(t)
	if value, set := os.LookupEnv("GOGC"); set {
		t.Setenv("GOGC", value) // restored after the test
		os.Unsetenv("GOGC")
	}
	got, err := Apply(Default)
	if err != nil || got != Default {
		t.Fatalf("Apply(%d) = %d, %v", Default, got, err)
	}
	if current := debug.SetGCPercent(Default); current != Default {
		t.Fatalf("collector target %d, want %d", current, Default)
	}
}

func TestGOGCWins(t *testing.T) {
	restore(t)
	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150) // as Go's runtime did at start from the variable
	got, err := Apply(Default)
	if err != nil || got != 150 {
		t.Fatalf("Apply(%d) with GOGC=150 = %d, %v", Default, got, err)
	}
	if current := debug.SetGCPercent(150); current != 150 {
		t.Fatalf("collector target %d, want the operator's 150", current)
	}
}

func TestRefusesANonPositivePercent(t *testing.T) {
	restore(t)
	if value, set := os.LookupEnv("GOGC"); set {
		t.Setenv("GOGC", value)
		os.Unsetenv("GOGC")
	}
	if _, err := Apply(0); err == nil {
		t.Fatal("Apply(0) succeeded")
	}
}
