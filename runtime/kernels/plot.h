// plot(y, path, x=, kind=, title=, xlabel=, ylabel=) through gnuplot; see plot.cpp.
#pragma once

#include <optional>
#include <string>

#include "runtime/tensor/ivalue.h"
#include "runtime/tensor/tensor.h"

namespace tsl {

// Draws y (1-D; against x, or against 0, 1, ... without it) as a line or a scatter
// into `path` (.svg or .png, written whole or not at all), or as text on stdout when
// `path` is empty. Errors name what is wrong: a bad shape or kind, no gnuplot.
void plot_kernel(Tensor y, std::string path, std::optional<Tensor> x, std::string kind,
                 std::string title, std::string xlabel, std::string ylabel);
// The same for a List[float] (a loss history).
void plot_list_kernel(IValue y, std::string path, std::optional<Tensor> x, std::string kind,
                      std::string title, std::string xlabel, std::string ylabel);

}  // namespace tsl
