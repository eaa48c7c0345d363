package lazylog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// formatted counts how often a value was formatted for a log line.
type formatted struct{ n *int }

func (f formatted) LogValue() slog.Value {
	*f.n++
	return slog.StringValue("args")
}

func TestLazyAttrsFormatsNothingBelowTheLevel(t *testing.T) {
	var out bytes.Buffer
	n := 0
	logger := slog.New(Handler{Inner: slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelError})})

	// As FerretDB's SQL layer does for every statement: With, then a debug line that is dropped.
	logger.With(slog.Any("args", formatted{&n})).Debug(">>> UPDATE")
	if n != 0 || out.Len() != 0 {
		t.Fatalf("a dropped debug line formatted its attributes %d times and wrote %q", n, out.String())
	}

	// A line at the level keeps every attribute and group, in order.
	logger.With("conn", 7).WithGroup("sql").With(slog.Any("args", formatted{&n})).Error("failed", "code", 11000)
	line := out.String()
	for _, want := range []string{"level=ERROR", "msg=failed", "conn=7", "sql.args=args", "sql.code=11000"} {
		if !strings.Contains(line, want) {
			t.Fatalf("logged %q, missing %q", line, want)
		}
	}
	if n != 1 {
		t.Fatalf("formatted %d times, want 1", n)
	}
}
