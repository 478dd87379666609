// Progress drawing. The pipeline's length is not part of the API (it depends
// on the opt level, the pipeline text and the model), so the bar counts the
// passes finished per stage instead of showing a fraction: one `#` per graph
// pass, one `=` per loop pass, the tail kept when it is long. Containers
// (Sequential) count too: events do not say which passes are containers.
#include "clients/cli/pass_progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include "absl/strings/str_format.h"

namespace kiln::cli {
namespace {

size_t TerminalWidth() {
  winsize size{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

}  // namespace

PassProgress::PassProgress(std::ostream& out, std::string model_name)
    : out_(out), model_name_(std::move(model_name)), start_(std::chrono::steady_clock::now()) {
  Draw("connecting");
}

void PassProgress::Update(const kiln::v1::PassEvent& event) {
  if (event.pass_name().empty()) return;  // a summary-only event
  (event.stage() == "loop" ? loop_passes_ : graph_passes_) += 1;
  Draw(event.pass_name());
}

void PassProgress::Draw(const std::string& current) {
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string bar = std::string(graph_passes_, '#') + std::string(loop_passes_, '=');
  constexpr size_t kBarWidth = 24;
  if (bar.size() > kBarWidth) bar = bar.substr(bar.size() - kBarWidth);
  std::string line = absl::StrFormat("%s [%-*s] %d graph, %d loop passes %.1fs %s", model_name_,
                                     kBarWidth, bar, graph_passes_, loop_passes_, seconds, current);
  size_t width = TerminalWidth();
  if (line.size() >= width) line.resize(width - 1);  // a wrapped line cannot be redrawn
  out_ << "\r\033[K" << line << std::flush;
  drawn_ = true;
}

void PassProgress::Finish() {
  if (drawn_) out_ << "\r\033[K" << std::flush;
  drawn_ = false;
}

}  // namespace kiln::cli
