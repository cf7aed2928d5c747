#include "app/core/plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>

namespace mv {

namespace {

constexpr uint32_t rgb(uint32_t r, uint32_t g, uint32_t b) { return r | (g << 8) | (b << 16) | (0xffu << 24); }
constexpr uint32_t kWhite = rgb(255, 255, 255), kBlack = rgb(0, 0, 0), kGrid = rgb(225, 225, 225),
                   kAxisGray = rgb(90, 90, 90);
constexpr uint32_t kPalette[] = {rgb(31, 119, 180),  rgb(255, 127, 14), rgb(44, 160, 44),   rgb(214, 39, 40),
                                 rgb(148, 103, 189), rgb(140, 86, 75),  rgb(227, 119, 194), rgb(127, 127, 127)};

// 5×7 glyphs, one byte per row (top first), bit 4 the leftmost column.
constexpr char kGlyphChars[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-+.:()/%,_=?";
constexpr uint8_t kGlyphs[][7] = {
    {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}, {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E},  // 0 1
    {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}, {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E},  // 2 3
    {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}, {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E},  // 4 5
    {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}, {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08},  // 6 7
    {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}, {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C},  // 8 9
    {0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}, {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E},  // A B
    {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E}, {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C},  // C D
    {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F}, {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10},  // E F
    {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F}, {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11},  // G H
    {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}, {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C},  // I J
    {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}, {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F},  // K L
    {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11}, {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11},  // M N
    {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}, {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10},  // O P
    {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D}, {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11},  // Q R
    {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E}, {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04},  // S T
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}, {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04},  // U V
    {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A}, {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11},  // W X
    {0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04}, {0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F},  // Y Z
    {0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00}, {0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00},  // - +
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C}, {0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00},  // . :
    {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}, {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08},  // ( )
    {0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00}, {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03},  // / %
    {0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08}, {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1F},  // , _
    {0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00}, {0x0E, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04},  // = ?
};
static_assert(sizeof(kGlyphs) / sizeof(kGlyphs[0]) == sizeof(kGlyphChars) - 1, "one glyph per character");

constexpr int kTextScale = 2;
constexpr int kAdvance = 6 * kTextScale, kTextHeight = 7 * kTextScale;

int text_width(const std::string& s) { return static_cast<int>(s.size()) * kAdvance - kTextScale; }

class Canvas {
 public:
  Canvas(int w, int h) : w_(w), h_(h), px_(static_cast<size_t>(w) * h, kWhite), clip_{0, 0, w, h} {}
  /// Later drawing stays inside [x0, x1) × [y0, y1).
  void clip(int x0, int y0, int x1, int y1) { clip_ = {x0, y0, x1, y1}; }
  void unclip() { clip_ = {0, 0, w_, h_}; }
  void rect(int x0, int y0, int x1, int y1, uint32_t c) {  // filled, [x0, x1) × [y0, y1)
    for (int y = std::max(y0, clip_[1]); y < std::min(y1, clip_[3]); ++y)
      for (int x = std::max(x0, clip_[0]); x < std::min(x1, clip_[2]); ++x) px_[static_cast<size_t>(y) * w_ + x] = c;
  }
  /// A line `thick` pixels wide (Bresenham, square pen).
  void line(int x0, int y0, int x1, int y1, uint32_t c, int thick = 1) {
    const int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    const int lo = -(thick - 1) / 2;
    for (int err = dx + dy;;) {
      rect(x0 + lo, y0 + lo, x0 + lo + thick, y0 + lo + thick, c);
      if (x0 == x1 && y0 == y1) break;
      const int e2 = 2 * err;
      if (e2 >= dy) {
        err += dy;
        x0 += sx;
      }
      if (e2 <= dx) {
        err += dx;
        y0 += sy;
      }
    }
  }
  /// Text with its top-left corner at (x, y).
  void text(int x, int y, const std::string& s, uint32_t c) {
    for (char ch : s) {
      const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      if (u != ' ') {
        const char* hit = u ? std::strchr(kGlyphChars, u) : nullptr;
        const uint8_t* g = kGlyphs[hit ? hit - kGlyphChars : sizeof(kGlyphChars) - 2];  // unknown: '?'
        for (int r = 0; r < 7; ++r)
          for (int col = 0; col < 5; ++col)
            if (g[r] >> (4 - col) & 1)
              rect(x + col * kTextScale, y + r * kTextScale, x + (col + 1) * kTextScale, y + (r + 1) * kTextScale, c);
      }
      x += kAdvance;
    }
  }
  std::vector<uint32_t> take() { return std::move(px_); }

 private:
  int w_, h_;
  std::vector<uint32_t> px_;
  std::array<int, 4> clip_;  // x0, y0, x1, y1
};

/// 1, 2 or 5 × 10^k, close to `raw`.
double nice_step(double raw) {
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  const double m = raw / p;
  return (m < 1.5 ? 1.0 : m < 3.5 ? 2.0 : m < 7.5 ? 5.0 : 10.0) * p;
}

std::string decade_label(int d) {
  return d >= -2 && d <= 3 ? fmt::format("{:g}", std::pow(10.0, d)) : fmt::format("1e{}", d);
}

bool usable(double x, double y) { return std::isfinite(x) && std::isfinite(y) && y > 0.0; }

}  // namespace

std::vector<uint32_t> render_log_plot(const PlotOptions& o, const std::vector<PlotSeries>& series) {
  const int W = std::max(o.width, 320), H = std::max(o.height, 240);
  // Data ranges.
  double xmin = 0.0, xmax = 0.0, ymin = HUGE_VAL, ymax = -HUGE_VAL;
  bool any = false, negative_x = false;
  for (const PlotSeries& s : series)
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!usable(s.x[i], s.y[i])) continue;
      xmin = any ? std::min(xmin, s.x[i]) : s.x[i];
      xmax = any ? std::max(xmax, s.x[i]) : s.x[i];
      ymin = std::min(ymin, s.y[i]);
      ymax = std::max(ymax, s.y[i]);
      negative_x |= s.x[i] < 0.0;
      any = true;
    }
  if (!any) ymin = ymax = 1.0;
  if (!negative_x) xmin = 0.0;
  if (xmax <= xmin) xmax = xmin + 1.0;
  const double xstep = nice_step((xmax - xmin) / 6.0);
  const double x0 = std::floor(xmin / xstep) * xstep, x1 = std::ceil(xmax / xstep - 1e-9) * xstep;
  const int d0 = static_cast<int>(std::floor(std::log10(ymin))),
            d1 = std::max(d0 + 1, static_cast<int>(std::ceil(std::log10(ymax))));

  // Layout: title and y label above the plot area, tick labels left of and below it.
  int label_w = 0;
  for (int d = d0; d <= d1; ++d) label_w = std::max(label_w, text_width(decade_label(d)));
  const int left = 16 + label_w + 10, right = W - 20, top = 16 + 2 * (kTextHeight + 8),
            bottom = H - 2 * kTextHeight - 30;
  const auto px = [&](double x) { return left + static_cast<int>(std::lround((x - x0) / (x1 - x0) * (right - left))); };
  const auto py = [&](double y) {
    return bottom - static_cast<int>(std::lround((std::log10(y) - d0) / (d1 - d0) * (bottom - top)));
  };

  Canvas c(W, H);
  c.text((W - text_width(o.title)) / 2, 12, o.title, kBlack);
  c.text(left, top - kTextHeight - 8, o.y_label, kBlack);
  c.text((left + right - text_width(o.x_label)) / 2, H - kTextHeight - 10, o.x_label, kBlack);
  const int label_step = (d1 - d0 + 7) / 8;  // at most about eight decade labels
  for (int d = d0; d <= d1; ++d) {
    const int y = py(std::pow(10.0, d));
    c.line(left, y, right, y, kGrid);
    c.line(left - 6, y, left, y, kAxisGray);
    if ((d - d0) % label_step == 0)
      c.text(left - 10 - text_width(decade_label(d)), y - kTextHeight / 2, decade_label(d), kBlack);
    for (int m = 2; m <= 9 && d < d1; ++m)
      c.line(left - 3, py(m * std::pow(10.0, d)), left, py(m * std::pow(10.0, d)), kAxisGray);
  }
  for (int i = 0; x0 + i * xstep <= x1 + 1e-9 * xstep; ++i) {
    const double x = x0 + i * xstep;
    const std::string l = fmt::format("{:g}", std::round(x / xstep) * xstep);
    c.line(px(x), top, px(x), bottom, kGrid);
    c.line(px(x), bottom, px(x), bottom + 6, kAxisGray);
    c.text(px(x) - text_width(l) / 2, bottom + 10, l, kBlack);
  }
  c.line(left, top, left, bottom, kBlack);
  c.line(left, bottom, right, bottom, kBlack);

  // Series, clipped to the plot area.
  c.clip(left + 1, top, right + 1, bottom);
  for (size_t k = 0; k < series.size(); ++k) {
    const PlotSeries& s = series[k];
    const uint32_t col = kPalette[k % std::size(kPalette)];
    bool pen_down = false;
    int lx = 0, ly = 0;
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!usable(s.x[i], s.y[i])) {
        pen_down = false;
        continue;
      }
      const int x = px(s.x[i]), y = py(s.y[i]);
      c.line(pen_down ? lx : x, pen_down ? ly : y, x, y, col, 2);
      lx = x, ly = y, pen_down = true;
    }
  }
  c.unclip();

  // Legend in the top-right corner of the plot area.
  int legend_w = 0;
  for (const PlotSeries& s : series) legend_w = std::max(legend_w, text_width(s.label));
  legend_w += 48;
  const int lx0 = right - legend_w - 10, ly0 = top + 10, row = kTextHeight + 8;
  c.rect(lx0, ly0, lx0 + legend_w, ly0 + static_cast<int>(series.size()) * row + 8, kWhite);
  for (size_t k = 0; k < series.size(); ++k) {
    const int y = ly0 + 6 + static_cast<int>(k) * row;
    c.line(lx0 + 8, y + kTextHeight / 2, lx0 + 32, y + kTextHeight / 2, kPalette[k % std::size(kPalette)], 3);
    c.text(lx0 + 40, y, series[k].label, kBlack);
  }
  const int lx1 = lx0 + legend_w, ly1 = ly0 + static_cast<int>(series.size()) * row + 8;
  c.line(lx0, ly0, lx1, ly0, kAxisGray), c.line(lx0, ly1, lx1, ly1, kAxisGray);
  c.line(lx0, ly0, lx0, ly1, kAxisGray), c.line(lx1, ly0, lx1, ly1, kAxisGray);
  return c.take();
}

}  // namespace mv
