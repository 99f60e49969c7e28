package main

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

func pct(s []float64, p float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	c := append([]float64(nil), s...)
	sort.Float64s(c)
	// Nearest rank.
	i := int(math.Ceil(p/100*float64(len(c)))) - 1
	if i < 0 {
		i = 0
	}
	return c[i]
}

func fms(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case v < 10:
		return fmt.Sprintf("%.2f ms", v)
	case v < 100:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

func fmb(kb int64) string { return fmt.Sprintf("%.1f MB", float64(kb)/1024) }

func verdict(ok bool, missBy string) string {
	if ok {
		return "**met**"
	}
	return "**missed** (" + missBy + ")"
}

func dur(s float64) string {
	if s <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%dm%02ds", int(s)/60, int(s)%60)
}

func kv64(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %s", k, fmb(m[k])))
	}
	return strings.Join(parts, ", ")
}

func toF(v []int64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func kv(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
