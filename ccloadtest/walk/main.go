// Command walk prints the files one request executes: given two coverage
// profiles (-covermode=count) of the same test run with N and N+1 requests,
// it lists every file with a block whose count grew, and how many blocks.
// `make walk` runs it over engine/ (docs/architecture.md).
package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: walk MODULE_PREFIX BEFORE.out AFTER.out")
		os.Exit(2)
	}
	prefix := os.Args[1]
	before, err := load(os.Args[2])
	if err == nil {
		var after map[string]int
		if after, err = load(os.Args[3]); err == nil {
			report(prefix, before, after)
			return
		}
	}
	fmt.Fprintln(os.Stderr, "walk:", err)
	os.Exit(1)
}

// load reads a coverage profile into block → count; a block listed twice
// (several test binaries) adds up.
func load(path string) (map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "mode:") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		n, err := strconv.Atoi(line[i+1:])
		if i < 0 || err != nil {
			return nil, fmt.Errorf("%s: not a coverage line: %q", path, line)
		}
		counts[line[:i]] += n
	}
	return counts, sc.Err()
}

func report(prefix string, before, after map[string]int) {
	blocks := map[string]int{}
	for block, n := range after {
		if n > before[block] {
			file := strings.TrimPrefix(block[:strings.IndexByte(block, ':')], prefix)
			blocks[file]++
		}
	}
	files := make([]string, 0, len(blocks))
	for f := range blocks {
		files = append(files, f)
	}
	sort.Strings(files)
	top := 0
	for _, f := range files {
		fmt.Printf("%4d  %s\n", blocks[f], f)
		if strings.Count(f, "/") == 1 {
			top++
		}
	}
	fmt.Printf("%d files: %d in engine/ itself, %d in its packages\n", len(files), top, len(files)-top)
}
