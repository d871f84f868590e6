package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"cronsheet/tools/bench/internal/benchkit"
	"cronsheet/tools/bench/internal/node"
)

// armWait bounds the park and restart cases' waits for arming.
const armWait = 30 * time.Minute

// parkCases arms n tasks due an hour from now, each at its own second,
// once with the default arming window (they are parked) and once with the
// window off (each holds its task and a timer), and prints the heap per
// armed task of each.
func parkCases(n int) error {
	fmt.Printf("| tasks due in 1 h+ | arm_window | heap/armed task | created+armed/s |\n|---:|---|---:|---:|\n")
	for _, window := range []time.Duration{node.DefaultArmWindow(), 0} {
		perTask, rate, err := parkCase(n, window == 0)
		if err != nil {
			return fmt.Errorf("park %d (window %s): %w", n, window, err)
		}
		fmt.Printf("| %d | %s | %s | %.0f |\n", n, window, benchkit.KiB(perTask), rate)
	}
	return nil
}

// parkCase creates n far rows on a node of its own (the arming window off
// when windowOff) and returns the heap per armed task and the rows created
// and armed per second.
func parkCase(n int, windowOff bool) (heapPerTask, armRate float64, err error) {
	var armed atomic.Int64
	nd, err := node.Start(context.Background(), node.Settings{ArmWindowOff: windowOff, OnArm: func(string) { armed.Add(1) }})
	if err != nil {
		return 0, 0, err
	}
	defer nd.Close()
	heapBefore := benchkit.HeapBytes()
	created := time.Now()
	if err := createFarRows(nd, n); err != nil {
		return 0, 0, err
	}
	if err := benchkit.WaitFor(func() bool { return armed.Load() >= int64(n) }, armWait); err != nil {
		return 0, 0, fmt.Errorf("only %d of %d armed", armed.Load(), n)
	}
	armRate = float64(n) / time.Since(created).Seconds()
	return float64(benchkit.HeapBytes()-min(benchkit.HeapBytes(), heapBefore)) / float64(n), armRate, nil
}

// restartCase creates n rows due an hour ahead, each at its own second,
// waits until they are armed, stops the node (which releases its claims)
// and times a new node on the same store re-arming all of them. Both nodes
// run with the arming window off (fire.arm_window 0): with it, tasks due
// an hour ahead are handed back to the store once armed and a new node
// claims none of them until their time (jobs-bench -pending measures that
// restart).
func restartCase(n int) error {
	var armed atomic.Int64
	nd, err := node.Start(context.Background(), node.Settings{ArmWindowOff: true, OnArm: func(string) { armed.Add(1) }})
	if err != nil {
		return err
	}
	defer nd.Close()
	if err := createFarRows(nd, n); err != nil {
		return err
	}
	if err := benchkit.WaitFor(func() bool { return armed.Load() >= int64(n) }, armWait); err != nil {
		return fmt.Errorf("only %d of %d armed", armed.Load(), n)
	}
	stopped := time.Now()
	if err := nd.Stop(); err != nil {
		return err
	}
	stopTime := time.Since(stopped)
	var rearmed atomic.Int64
	started := time.Now()
	again, err := node.Start(context.Background(), node.Settings{Dir: nd.Dir, ArmWindowOff: true, OnArm: func(string) { rearmed.Add(1) }})
	if err != nil {
		return err
	}
	defer again.Close()
	if err := benchkit.WaitFor(func() bool { return rearmed.Load() >= int64(n) }, armWait); err != nil {
		return fmt.Errorf("only %d of %d re-armed", rearmed.Load(), n)
	}
	took := time.Since(started)
	fmt.Printf("| tasks | graceful stop | start → all re-armed | re-armed/s |\n|---:|---:|---:|---:|\n")
	fmt.Printf("| %d | %s | %s | %.0f |\n", n, stopTime.Round(time.Millisecond), took.Round(time.Millisecond), float64(n)/took.Seconds())
	return nil
}

// createFarRows creates n one-off rows through the API, due an hour from
// now, each at its own second.
func createFarRows(nd *node.Node, n int) error {
	base := time.Now().Add(time.Hour).Truncate(time.Second)
	return benchkit.Parallel(n, 8, func(i int) error {
		return createRow(nd.Base, base.Add(time.Duration(i)*time.Second).UTC().Format(timeLayout), nil)
	})
}
