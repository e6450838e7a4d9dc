//go:build !unix

package promtext

// maxFDs reports no limit where there is no RLIMIT_NOFILE (Windows has no
// per-process handle limit of that kind): process_max_fds is left out
// rather than made up.
func maxFDs() (uint64, bool) { return 0, false }
