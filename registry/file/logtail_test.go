package file

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/rotd/coordination/coord"
)

// forwardLogLines is LogLines as it was before the log was read from its
// end: every file read whole, forwards, newest first until n lines are
// in. It is the reference for the tail reader's lines and the "before"
// figure of BenchmarkLogTail.
func forwardLogLines(s *Backend, n int) (lines []string, skipped int, err error) {
	files, err := s.logFiles()
	if err != nil {
		return nil, 0, err
	}
	for i := len(files) - 1; i >= 0; i-- {
		ls, sk, err := forwardReadLog(s, files[i])
		if err != nil {
			return nil, 0, err
		}
		skipped += sk
		lines = append(ls, lines...)
		if n > 0 && len(lines) >= n {
			return lines[len(lines)-n:], skipped, nil
		}
	}
	return lines, skipped, nil
}

func forwardReadLog(s *Backend, name string) ([]string, int, error) {
	f, err := s.tree.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var out []string
	skipped := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			skipped++
			return len(data), nil, nil
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		if line, ok := coord.CleanLogLine(sc.Text()); ok {
			out = append(out, line)
		} else {
			skipped++
		}
	}
	return out, skipped, nil
}

// oracleLogLines is the plain statement of what LogLines(0) returns: every
// file read whole, oldest first, split at newlines; the part after the
// last newline is torn, a line over maxLogLine is skipped, the rest
// parses or is skipped.
func oracleLogLines(t *testing.T, s *Backend) (lines []string, skipped int) {
	files, err := s.logFiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		data, err := os.ReadFile(s.tree.Path(name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		segs := strings.Split(string(data), "\n")
		if tail := segs[len(segs)-1]; tail != "" {
			skipped++
		}
		for _, l := range segs[:len(segs)-1] {
			if c, ok := coord.CleanLogLine(l); ok && len(l) <= maxLogLine {
				lines = append(lines, c)
			} else {
				skipped++
			}
		}
	}
	return lines, skipped
}

// randomLog builds a log file's content from whole lines, foreign lines,
// empty lines, lines longer than a read block (some longer than
// maxLogLine) and, sometimes, a torn tail.
func randomLog(r *rand.Rand, lines int) []byte {
	var b bytes.Buffer
	for i := range lines {
		switch r.IntN(60) {
		case 0, 1, 2:
			b.WriteString("foreign line, not ours\n")
		case 3, 4:
			b.WriteByte('\n')
		case 5:
			fmt.Fprintf(&b, "[2026-11-22T10:00:%02dZ] a%d ▶ long %s\n", i%60, i, strings.Repeat("x", r.IntN(3*logBlock)))
		case 6:
			if r.IntN(8) == 0 {
				fmt.Fprintf(&b, "[2026-11-22T10:00:00Z] a ▶ huge %s\n", strings.Repeat("y", maxLogLine+r.IntN(logBlock)))
				continue
			}
			fallthrough
		default:
			fmt.Fprintf(&b, "[2026-11-22T10:00:%02dZ] agent-%d ▶ claimed task %d.%d (epoch %d)\n", i%60, i%7, i/10, i%10, i)
		}
	}
	if r.IntN(3) == 0 {
		b.WriteString("[2026-11-22T10:00:00Z] a ▶ torn ta")
	}
	return b.Bytes()
}

// TestLogTailMatchesForward: reading the last n lines backwards from the
// end of the files gives exactly the lines a forward read of everything
// gives (oracleLogLines), across rotated files, block boundaries, foreign, empty, overlong
// and torn lines; ReadLog(0) streams the same lines and skip count.
func TestLogTailMatchesForward(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	for round := range 10 {
		s := freshStore(t, crashSeed)
		days := []string{"2026-11-20", "2026-11-21", "2026-11-21.1"}
		for _, d := range days[:round%4%len(days)+round%2] {
			if err := os.WriteFile(s.tree.Path("coordination-"+d+".log"), randomLog(r, r.IntN(300)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if round%5 != 4 { // sometimes no current log at all
			if err := os.WriteFile(s.tree.Path(LogFile), randomLog(r, r.IntN(400)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		all, allSkipped := oracleLogLines(t, s)
		for _, n := range []int{1, 2, 7, 50, 399, len(all), len(all) + 5, 0} {
			got, _, err := s.logLines(n)
			if err != nil {
				t.Fatal(err)
			}
			want := all
			if n > 0 && n < len(all) {
				want = all[len(all)-n:]
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				k := 0
				for k < min(len(got), len(want)) && got[k] == want[k] {
					k++
				}
				t.Fatalf("round %d, n=%d: %d lines, want %d; first difference at %d: %.200q", round, n, len(got), len(want), k, append(got[k:min(k+2, len(got))], want[k:min(k+2, len(want))]...))
			}
		}
		var streamed []string
		skipped, err := s.readLog(0, func(l string) error { streamed = append(streamed, l); return nil })
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(streamed, "\n") != strings.Join(all, "\n") || skipped != allSkipped {
			t.Fatalf("round %d: ReadLog(0) gave %d lines (%d skipped), want %d (%d skipped)", round, len(streamed), skipped, len(all), allSkipped)
		}
	}
}

// writeBigLog makes the current log size bytes of ordinary claim lines.
func writeBigLog(tb testing.TB, s *Backend, size int) {
	tb.Helper()
	var chunk bytes.Buffer
	for i := 0; chunk.Len() < 1<<20; i++ {
		fmt.Fprintf(&chunk, "[2026-11-22T10:%02d:%02dZ] agent-%02d ▶ claimed task %d.%d (epoch %d)\n", i/60%60, i%60, i%16, i/100, i%100, i)
	}
	f, err := os.Create(s.tree.Path(LogFile))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	for written := 0; written < size; written += chunk.Len() {
		if _, err := f.Write(chunk.Bytes()); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := f.WriteString("[2026-11-22T11:00:00Z] a ▶ the last line\n"); err != nil {
		tb.Fatal(err)
	}
}

// TestLogTailBoundedMemory: the last 20 lines of a 50 MB log cost a few
// read blocks of memory, not the log's size (bytes allocated, not time).
//
// Broken build this fails against: LogLines reading each file whole and
// forwards (forwardLogLines above): 131 MB allocated.
func TestLogTailBoundedMemory(t *testing.T) {
	s := freshStore(t, crashSeed)
	writeBigLog(t, s, 50<<20)
	measure := func(read func() ([]string, int, error)) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		lines, _, err := read()
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) != 20 || !strings.HasSuffix(lines[19], "a ▶ the last line") {
			t.Fatalf("got %d lines ending %q", len(lines), lines[len(lines)-1])
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	got := measure(func() ([]string, int, error) { return s.logLines(20) })
	if got > 512<<10 {
		t.Fatalf("the last 20 lines of a 50 MB log allocated %d bytes (bound 512 KiB)", got)
	}
	t.Logf("the last 20 lines of a 50 MB log: %d bytes allocated", got)
}

// BenchmarkLogTail: 'log -n 20' (and each 'top' redraw) on a log of 1 MB
// and of 300 MB: the tail read from the end ("tail") against the former
// whole forward read ("forward"), in the same run. The 300 MB case is
// skipped with -short.
func BenchmarkLogTail(b *testing.B) {
	for _, mb := range []int{1, 300} {
		if mb > 1 && testing.Short() {
			continue
		}
		s := freshStore(b, crashSeed)
		writeBigLog(b, s, mb<<20)
		for _, c := range []struct {
			name string
			read func(*Backend, int) ([]string, int, error)
		}{{"tail", (*Backend).logLines}, {"forward", forwardLogLines}} {
			b.Run(fmt.Sprintf("%s/log=%dMB", c.name, mb), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					lines, _, err := c.read(s, 20)
					if err != nil || len(lines) != 20 {
						b.Fatal(len(lines), err)
					}
				}
			})
		}
	}
}

// TestFollowerRotationDropsTornTail: a torn tail at the end of a rotated
// file is skipped, never glued to the next file's first line.
//
// Broken build this fails against: the follower keeping its unterminated
// bytes across the switch (it printed "cut shthe next day").
func TestFollowerRotationDropsTornTail(t *testing.T) {
	s := freshStore(t, crashSeed)
	if err := os.WriteFile(s.tree.Path(LogFile), []byte("[2026-11-21T23:59:58Z] a ▶ before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fl, err := s.follow()
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	f, err := os.OpenFile(s.tree.Path(LogFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[2026-11-21T23:59:59Z] a ▶ whole\n[2026-11-21T23:59:59Z] a ▶ cut sh")
	f.Close()
	if err := os.Rename(s.tree.Path(LogFile), s.tree.Path(RotatedName("2026-11-21"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.tree.Path(LogFile), []byte("[2026-11-22T00:00:00Z] b ▶ the next day\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lines, err := fl.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := "[2026-11-21T23:59:59Z] a ▶ whole\n[2026-11-22T00:00:00Z] b ▶ the next day"
	if strings.Join(lines, "\n") != want || fl.Skipped != 1 {
		t.Fatalf("followed %q (skipped %d), want %q and 1 skipped", lines, fl.Skipped, want)
	}
}
