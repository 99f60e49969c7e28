package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"log"
	"math"
	"os"
	"os/exec"
)

// --- the plot ---

func drawPlot(path string, s soakResult) error {
	const W, H, left, right, top, bottom = 800, 360, 70, 20, 40, 50
	img := image.NewRGBA(image.Rect(0, 0, W, H))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{255, 255, 255, 255}}, image.Point{}, draw.Src)
	maxT, maxKB := 0.0, int64(0)
	for _, m := range s.Memory {
		maxT = math.Max(maxT, m.Seconds)
		maxKB = max(maxKB, m.RSSKB, m.HeapKB)
	}
	if maxT == 0 {
		maxT = 1
	}
	// Round the axis up to 10 MB.
	maxMB := math.Ceil(float64(maxKB)/1024/10) * 10
	x := func(t float64) int { return left + int(t/maxT*float64(W-left-right)) }
	y := func(kb int64) int { return H - bottom - int(float64(kb)/1024/maxMB*float64(H-top-bottom)) }
	grey := color.RGBA{220, 220, 220, 255}
	black := color.RGBA{0, 0, 0, 255}
	for mb := 0.0; mb <= maxMB; mb += 10 {
		line(img, left, y(int64(mb*1024)), W-right, y(int64(mb*1024)), grey)
	}
	line(img, left, top, left, H-bottom, black)
	line(img, left, H-bottom, W-right, H-bottom, black)
	rss := color.RGBA{31, 95, 74, 255}
	heap := color.RGBA{242, 150, 40, 255}
	for i := 1; i < len(s.Memory); i++ {
		a, b := s.Memory[i-1], s.Memory[i]
		thick(img, x(a.Seconds), y(a.RSSKB), x(b.Seconds), y(b.RSSKB), rss)
		thick(img, x(a.Seconds), y(a.HeapKB), x(b.Seconds), y(b.HeapKB), heap)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return err
	}
	// Labels with ImageMagick when it is there (scripts/test installs it);
	// the plot stands without them.
	if _, err := exec.LookPath("convert"); err != nil {
		return nil
	}
	args := []string{path}
	// Name a font file: ImageMagick's default (Helvetica) needs
	// Ghostscript's fonts, which a fresh machine lacks.
	if out, err := exec.Command("fc-match", "-f", "%{file}", "sans").Output(); err == nil && len(out) > 0 {
		args = append(args, "-font", string(out))
	}
	args = append(args, "-fill", "black", "-pointsize", "14",
		"-annotate", fmt.Sprintf("+%d+%d", left, 25), fmt.Sprintf("Soak: %d payments, memory of the process over time (%.0f s)", s.Payments, maxT),
		"-pointsize", "12")
	for mb := 0.0; mb <= maxMB; mb += 10 {
		args = append(args, "-annotate", fmt.Sprintf("+%d+%d", 20, y(int64(mb*1024))+4), fmt.Sprintf("%.0f MB", mb))
	}
	for i := 0; i <= 5; i++ {
		t := maxT * float64(i) / 5
		args = append(args, "-annotate", fmt.Sprintf("+%d+%d", x(t)-10, H-bottom+18), fmt.Sprintf("%.0f s", t))
	}
	args = append(args,
		"-fill", "rgb(31,95,74)", "-annotate", fmt.Sprintf("+%d+%d", W-260, H-12), "RSS",
		"-fill", "rgb(242,150,40)", "-annotate", fmt.Sprintf("+%d+%d", W-200, H-12), "Go heap (objects)",
		path)
	if out, err := exec.Command("convert", args...).CombinedOutput(); err != nil {
		log.Printf("convert: %v %s", err, out)
	}
	return nil
}

func line(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		img.Set(x0, y0, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func thick(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	for d := -1; d <= 1; d++ {
		line(img, x0, y0+d, x1, y1+d, c)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}
