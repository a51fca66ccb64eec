// Package waiter polls checkers until all are ready or a timeout passes;
// a minimal stand-in for wait4x's waiter package (see ../checker).
package waiter

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"wait4x.dev/v3/checker"
)

// Option configures a wait.
type Option func(*options)

type options struct {
	timeout  time.Duration
	interval time.Duration
	logger   logr.Logger
}

// WithTimeout bounds the whole wait; 0 means no bound.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithInterval sets the pause between two attempts.
func WithInterval(d time.Duration) Option { return func(o *options) { o.interval = d } }

// WithLogger sets where progress is reported.
func WithLogger(l logr.Logger) Option { return func(o *options) { o.logger = l } }

// WaitParallelContext waits for every checker concurrently and returns the
// first error (a timeout included).
func WaitParallelContext(ctx context.Context, checkers []checker.Checker, opts ...Option) error {
	o := options{timeout: 10 * time.Second, interval: time.Second, logger: logr.Discard()}
	for _, f := range opts {
		f(&o)
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	errs := make(chan error, len(checkers))
	var wg sync.WaitGroup
	for _, c := range checkers {
		wg.Add(1)
		go func(c checker.Checker) {
			defer wg.Done()
			errs <- waitOne(ctx, c, o)
		}(c)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func waitOne(ctx context.Context, c checker.Checker, o options) error {
	id, _ := c.Identity()
	for {
		err := c.Check(ctx)
		if err == nil {
			o.logger.Info("target is ready", "target", id)
			return nil
		}
		o.logger.Info("target is not ready yet", "target", id, "reason", err.Error())
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", id, ctx.Err())
		case <-time.After(o.interval):
		}
	}
}
