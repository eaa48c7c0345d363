// Package lazylog holds the slog handler of mailroom-ferretdb.
package lazylog

import (
	"context"
	"log/slog"
)

// Handler defers its Inner handler's WithAttrs and WithGroup until a record is
// actually handled. FerretDB's SQL layer calls `logger.With(args...)` twice per
// statement for a debug line, and slog's TextHandler formats the attributes in
// With itself, whether or not the line is ever logged: every written document's
// JSON was quoted rune by rune and dropped (7 % of FerretDB's CPU in a profile of
// the pixel bench; an update of an email record by `_id` cost 418-470 us of CPU
// with the eager handler, 372-410 with this one). Below the level, nothing is
// formatted now.
type Handler struct {
	Inner slog.Handler
	// ops: the With/WithGroup calls not applied yet, in order.
	ops []op
}

type op struct {
	group string
	attrs []slog.Attr
}

func (h Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.Inner.Enabled(ctx, l) }

func (h Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return Handler{Inner: h.Inner, ops: append(h.ops[:len(h.ops):len(h.ops)], op{attrs: attrs})}
}

func (h Handler) WithGroup(name string) slog.Handler {
	return Handler{Inner: h.Inner, ops: append(h.ops[:len(h.ops):len(h.ops)], op{group: name})}
}

func (h Handler) Handle(ctx context.Context, r slog.Record) error {
	Inner := h.Inner
	for _, op := range h.ops {
		if op.attrs != nil {
			Inner = Inner.WithAttrs(op.attrs)
		} else {
			Inner = Inner.WithGroup(op.group)
		}
	}
	return Inner.Handle(ctx, r)
}
