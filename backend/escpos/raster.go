package escpos

import (
	"fmt"
	"image"
)

// MaxImageHeight is the tallest raster image Image accepts, in dots.
const MaxImageHeight = 4095

// Image prints img as a raster bit image (GS v 0), at most Dots() wide.
// See ImageWidth.
func (b *Builder) Image(img image.Image) *Builder { return b.ImageWidth(img, b.Dots()) }

// ImageWidth prints img as a raster bit image (GS v 0) at most maxDots
// wide. A wider image is scaled down (box filter, aspect ratio kept); a
// narrower one is printed at its size. The width is padded with white to a
// multiple of 8 dots. Transparent pixels are white. The grey levels are
// reduced to black and white by Floyd–Steinberg error diffusion.
func (b *Builder) ImageWidth(img image.Image, maxDots int) *Builder {
	if b.err != nil {
		return b
	}
	if img == nil {
		return b.fail(fmt.Errorf("%w: nil image", ErrBadImage))
	}
	maxDots = min(maxDots, b.Dots())
	r := img.Bounds()
	sw, sh := r.Dx(), r.Dy()
	if sw <= 0 || sh <= 0 || maxDots < 8 {
		return b.fail(fmt.Errorf("%w: %dx%d into %d dots", ErrBadImage, sw, sh, maxDots))
	}
	w, h := sw, sh
	if w > maxDots {
		w = maxDots
		h = max(int(int64(sh)*int64(w)/int64(sw)), 1)
	}
	if h > MaxImageHeight {
		return b.fail(fmt.Errorf("%w: %d dots tall, at most %d", ErrBadImage, h, MaxImageHeight))
	}
	grey := scaleGrey(img, w, h)
	bits := dither(grey, w, h)
	bw := (w + 7) / 8
	b.endLine()
	b.raw(0x1D, 'v', '0', 0, byte(bw), byte(bw>>8), byte(h), byte(h>>8))
	return b.raw(bits...)
}

// scaleGrey returns the luminance (0 black .. 255 white) of img scaled to
// w x h by averaging the source pixels each target pixel covers.
func scaleGrey(img image.Image, w, h int) []float32 {
	r := img.Bounds()
	sw, sh := r.Dx(), r.Dy()
	out := make([]float32, w*h)
	for y := range h {
		y0 := y * sh / h
		y1 := max((y+1)*sh/h, y0+1)
		for x := range w {
			x0 := x * sw / w
			x1 := max((x+1)*sw/w, x0+1)
			var sum float64
			for sy := y0; sy < y1; sy++ {
				for sx := x0; sx < x1; sx++ {
					sum += luminance(img, r.Min.X+sx, r.Min.Y+sy)
				}
			}
			out[y*w+x] = float32(sum / float64((y1-y0)*(x1-x0)))
		}
	}
	return out
}

// luminance of one pixel composed over white, 0..255.
func luminance(img image.Image, x, y int) float64 {
	cr, cg, cb, ca := img.At(x, y).RGBA() // premultiplied, 16 bits
	white := 0xFFFF - ca
	rr, gg, bb := float64(cr+white), float64(cg+white), float64(cb+white)
	return (0.299*rr + 0.587*gg + 0.114*bb) / 257
}

// dither reduces grey to one bit a dot by Floyd–Steinberg error diffusion
// and packs the rows MSB first, a set bit printing black.
func dither(grey []float32, w, h int) []byte {
	bw := (w + 7) / 8
	out := make([]byte, bw*h)
	for y := range h {
		for x := range w {
			i := y*w + x
			old := grey[i]
			var nv float32 = 255
			if old < 128 {
				nv = 0
				out[y*bw+x/8] |= 0x80 >> (x % 8)
			}
			e := old - nv
			if x+1 < w {
				grey[i+1] += e * 7 / 16
			}
			if y+1 < h {
				if x > 0 {
					grey[i+w-1] += e * 3 / 16
				}
				grey[i+w] += e * 5 / 16
				if x+1 < w {
					grey[i+w+1] += e * 1 / 16
				}
			}
		}
	}
	return out
}
