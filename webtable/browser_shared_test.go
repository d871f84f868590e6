package webtable_test

import (
	"context"
	"os"
	"sync"

	"github.com/chromedp/chromedp"
)

// browsers is the headless Chromium the browser tests of this test binary
// share; TestMain stops it.
var browsers sharedChromium

// sharedChromium is one headless Chromium process for many tests: each
// test opens its own browser context and tab in it (startBrowser), so a
// test pays for a tab, not for a Chromium start and stop.
type sharedChromium struct {
	mu          sync.Mutex
	path        string             // the executable it runs
	dir         string             // its profile directory
	ctx         context.Context    // its first tab's context, which holds the browser
	cancelCtx   context.CancelFunc // closes the browser
	cancelAlloc context.CancelFunc // waits for its process to end
}

// get returns the context of the running Chromium, starting one from path
// on a fresh profile when none runs (none yet, or the last one exited or
// was dropped).
func (s *sharedChromium) get(path string) (context.Context, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx != nil && s.ctx.Err() == nil && s.path == path {
		return s.ctx, nil
	}
	s.stopLocked()
	dir, err := os.MkdirTemp("", "cronsheet-chromium-")
	if err != nil {
		return nil, err
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(dir),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1400, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	// The first run starts the browser; it must not carry a deadline (the
	// browser would die with it), so it runs on the bare context.
	if err := chromedp.Do(ctx); err != nil {
		cancelCtx()
		cancelAlloc()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s.path, s.dir, s.ctx, s.cancelCtx, s.cancelAlloc = path, dir, ctx, cancelCtx, cancelAlloc
	return ctx, nil
}

// drop stops the Chromium whose context is ctx if it is still the shared
// one, so that the next get starts a fresh one.
func (s *sharedChromium) drop(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == ctx {
		s.stopLocked()
	}
}

// stop stops the running Chromium, if any, and removes its profile.
func (s *sharedChromium) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked()
}

func (s *sharedChromium) stopLocked() {
	if s.ctx == nil {
		return
	}
	s.cancelCtx()
	s.cancelAlloc()
	_ = os.RemoveAll(s.dir)
	s.path, s.dir, s.ctx, s.cancelCtx, s.cancelAlloc = "", "", nil, nil, nil
}
