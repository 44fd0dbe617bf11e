// plot(y, path): a line or scatter plot drawn by gnuplot (Debian's gnuplot-nox), to an
// SVG or PNG file or, without a path, as text on stdout (the REPL's quick look).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>

#include "runtime/kernels/files.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/plot.h"
#include "runtime/tensor/device_backend.h"

namespace tsl {
namespace {

namespace fs = std::filesystem;

// A gnuplot single-quoted string: a quote inside is written twice.
std::string gnuplot_string(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

std::vector<double> values_of(const Tensor& t, const char* what) {
  TSL_CHECK(t.dim() == 1, "plot: ", what, " must be 1-dimensional, got shape ",
            shape_str(t.sizes()));
  Tensor c = copy_to_device(t, kCPU).contiguous();
  std::vector<double> out(static_cast<size_t>(c.numel()));
  TSL_DISPATCH_ALL(c.dtype(), "plot", [&] {
    const scalar_t* p = c.data_ptr<scalar_t>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(p[i]);
  });
  return out;
}

// A temporary file that removes itself.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& suffix) {
    std::string pattern = (fs::temp_directory_path() / ("tsl-plot-XXXXXX" + suffix)).string();
    int fd = ::mkstemps(pattern.data(), static_cast<int>(suffix.size()));
    TSL_CHECK(fd >= 0, "plot: cannot create a temporary file in ",
              fs::temp_directory_path().string());
    ::close(fd);
    path = pattern;
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

bool have_gnuplot() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (!dir.empty() && ::access((fs::path(dir) / "gnuplot").c_str(), X_OK) == 0) return true;
  }
  return false;
}

}  // namespace

void plot_kernel(Tensor y, std::string path, std::optional<Tensor> x, std::string kind,
                 std::string title, std::string xlabel, std::string ylabel) {
  TSL_CHECK(kind == "line" || kind == "scatter", "plot: kind must be 'line' or 'scatter', not '",
            kind, "'");
  std::string terminal;
  if (path.empty()) {
    terminal = "dumb size 79,24";
  } else if (path.ends_with(".svg")) {
    terminal = "svg size 640,480 dynamic background rgb 'white'";
  } else if (path.ends_with(".png")) {
    terminal = "pngcairo size 640,480";
  } else {
    TSL_ERROR("plot: '", path, "' must end in .svg or .png (or leave out the path to draw ",
              "on the terminal)");
  }
  std::vector<double> ys = values_of(y, "y");
  std::vector<double> xs;
  if (x) {
    xs = values_of(*x, "x");
    TSL_CHECK(xs.size() == ys.size(), "plot: x has ", xs.size(), " values but y has ", ys.size());
  }
  TSL_CHECK(!ys.empty(), "plot: nothing to plot (y is empty)");
  TSL_CHECK(have_gnuplot(),
            "plot: gnuplot is not installed (sudo apt-get install gnuplot-nox, or "
            "TSL_WITH_DATA=1 scripts/setup.sh)");

  TempFile data(".dat"), script(".gp"), picture(path.empty() ? ".txt" : ".out");
  {
    std::ostringstream d;
    d.precision(17);
    for (size_t i = 0; i < ys.size(); ++i)
      d << (x ? xs[i] : static_cast<double>(i)) << " " << ys[i] << "\n";
    write_file_or_throw(data.path, d.str(), "plot");
  }
  std::ostringstream g;
  g << "set terminal " << terminal << "\n"
    << "set output " << gnuplot_string(picture.path) << "\n"
    << "set title " << gnuplot_string(title) << " noenhanced\n"
    << "set xlabel " << gnuplot_string(xlabel) << " noenhanced\n"
    << "set ylabel " << gnuplot_string(ylabel) << " noenhanced\n"
    << "set key off\n";
  if (!path.empty()) g << "set grid\n";
  g << "plot " << gnuplot_string(data.path) << " using 1:2 with "
    << (kind == "line" ? "lines linewidth 2" : "points pointtype 7 pointsize 0.6") << "\n";
  write_file_or_throw(script.path, g.str(), "plot");

  std::string cmd = "gnuplot " + gnuplot_string(script.path) + " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  TSL_CHECK(pipe != nullptr, "plot: cannot run gnuplot");
  std::string messages;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) messages.append(buf, n);
  int status = ::pclose(pipe);
  TSL_CHECK(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "plot: gnuplot failed: ", messages);
  std::string drawn = read_file_or_throw(picture.path, "plot");
  if (path.empty()) {
    std::fwrite(drawn.data(), 1, drawn.size(), stdout);
    std::fflush(stdout);
    return;
  }
  write_file_or_throw(path, drawn, "plot");
}

void plot_list_kernel(IValue y, std::string path, std::optional<Tensor> x, std::string kind,
                      std::string title, std::string xlabel, std::string ylabel) {
  std::vector<double> values;
  for (const IValue& v : y.to_list().elements) values.push_back(v.to_double());
  plot_kernel(Tensor::from_vector(values), std::move(path), std::move(x), std::move(kind),
              std::move(title), std::move(xlabel), std::move(ylabel));
}

}  // namespace tsl
