// train/experiments/common/child_jobs.cpp — run_child_jobs (child_jobs.h): fork, one pipe per child for its result,
// ppoll on the pipes with SIGINT and SIGTERM let through only there, and a guard that kills and
// reaps whatever is still running on every way out.
//
// Why fork and not posix_spawn of /proc/self/exe with `train ...` arguments: a job is a C++ function
// run on the data the parent has already loaded and checked, and its result comes back as the
// function's own value, so no command line has to be kept in step with TrainOptions and no file
// has to carry numbers back. Fork's hazards, and how they are met here:
// - Only the forking thread exists in the child. The CPU pool's workers, if the parent ever started
//   them, are missing there, so the child sets one CPU thread before its job: every parallel call
//   then runs on the caller and never reaches the pool (thread_pool.cpp, run_pieces; set_pool_threads
//   only stores the count). OpenBLAS runs on one thread in qkv (set_cpu_threads) and stops its own
//   threads around a fork. A job must not ask for more threads (the demo's children train at 1).
// - Buffered output: stdout and stderr are flushed before each fork, and a child leaves with _exit,
//   so nothing the parent had buffered is written twice and no atexit handler runs twice.
// - CUDA contexts and MPI do not survive a fork: the jobs run on the CPU, in a program without MPI
//   started (the demo trains on the CPU and never joins a process group).
#include "train/experiments/common/child_jobs.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <vector>

#include "framework/backend.h"
#include "train/run/trainer.h"

namespace qkv::app {

namespace {

volatile sig_atomic_t caught_signal = 0;

void note_signal(int sig) { caught_signal = sig; }

// SIGINT and SIGTERM caught and blocked while the jobs run: ppoll lets them through atomically, so
// none can slip in between the check and the wait. The old handlers and mask come back at the end,
// and in each child at its start (a signal to the process group then ends the children at once).
class SignalsCaught {
 public:
  SignalsCaught() {
    caught_signal = 0;
    sigset_t both;
    sigemptyset(&both);
    for (const int sig : kCaught) sigaddset(&both, sig);
    sigprocmask(SIG_BLOCK, &both, &old_mask_);
    struct sigaction action {};
    action.sa_handler = note_signal;
    sigemptyset(&action.sa_mask);
    for (size_t k = 0; k < 2; ++k) sigaction(kCaught[k], &action, &old_actions_[k]);
    wait_mask_ = old_mask_;
    for (const int sig : kCaught) sigdelset(&wait_mask_, sig);
  }
  ~SignalsCaught() { restore(); }
  SignalsCaught(const SignalsCaught&) = delete;
  SignalsCaught& operator=(const SignalsCaught&) = delete;
  void restore() const {
    for (size_t k = 0; k < 2; ++k) sigaction(kCaught[k], &old_actions_[k], nullptr);
    sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  const sigset_t& wait_mask() const { return wait_mask_; }

 private:
  static constexpr int kCaught[2] = {SIGINT, SIGTERM};
  sigset_t old_mask_{}, wait_mask_{};
  struct sigaction old_actions_[2] = {};  // kCaught's
};

struct Child {
  pid_t pid = -1;
  int fd = -1;  // the read end of the child's result pipe
  int index = 0;
  std::string received;
};

int reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  return status;
}

// The running children; whatever is left when it goes is killed and reaped (a failure, a signal,
// an exception from done()).
struct RunningChildren {
  std::vector<Child> children;
  RunningChildren() = default;
  RunningChildren(const RunningChildren&) = delete;
  RunningChildren& operator=(const RunningChildren&) = delete;
  ~RunningChildren() {
    for (const Child& c : children) kill(c.pid, SIGKILL);
    for (const Child& c : children) {
      reap(c.pid);
      close(c.fd);
    }
  }
};

std::string message_on_one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

bool write_all(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The child's whole life: the job's result (or its error) into the pipe, then _exit.
[[noreturn]] void run_child(const Child& child, int write_fd, pid_t parent, const std::vector<Child>& others,
                            const std::function<std::string(int)>& job, const SignalsCaught& signals) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);   // no orphan keeps training if the parent dies
  if (getppid() != parent) _exit(1);  // it died before that line
  signals.restore();
  for (const Child& c : others) close(c.fd);
  std::string message;
  int status = 1;
  try {
    set_cpu_threads(1);  // before anything runs: the pool's workers are not in this process
    message = "ok\n" + job(child.index);
    status = 0;
  } catch (const std::bad_alloc&) {
    message = "error\nout of memory: the job asked for more memory than this machine could give";
  } catch (const std::exception& e) { message = "error\n" + message_on_one_line(e.what()); } catch (...) {
    message = "error\nan exception that is not a std::exception";
  }
  std::fflush(stdout);
  std::fflush(stderr);
  if (!write_all(write_fd, message)) _exit(1);
  _exit(status);
}

Child start_child(int index, const std::vector<Child>& others, const std::function<std::string(int)>& job,
                  const SignalsCaught& signals) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(fmt::format("cannot make a pipe: {}", std::strerror(errno)));
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    close(fds[0]);
    close(fds[1]);
    throw std::runtime_error(fmt::format("cannot start a child process: {}", std::strerror(error)));
  }
  Child child{.pid = pid, .fd = fds[0], .index = index, .received = {}};
  if (pid == 0) {
    close(fds[0]);
    run_child(child, fds[1], parent, others, job, signals);
  }
  close(fds[1]);
  return child;
}

[[noreturn]] void throw_interrupted(int sig) {
  throw Interrupted(fmt::format("interrupted{}: every child process was stopped", signal_note(sig)));
}

// Waits until a signal comes (throws Interrupted) or some child's pipe has data or is closed;
// reads what is there and returns the positions of the children whose pipe is closed (they ended).
std::vector<size_t> wait_for_ended(std::vector<Child>& children, const SignalsCaught& signals) {
  std::vector<pollfd> fds;
  for (const Child& c : children) fds.push_back({.fd = c.fd, .events = POLLIN, .revents = 0});
  const int ready = ppoll(fds.data(), fds.size(), nullptr, &signals.wait_mask());
  if (caught_signal != 0) throw_interrupted(caught_signal);
  if (ready < 0 && errno != EINTR)
    throw std::runtime_error(fmt::format("waiting for the child processes: {}", std::strerror(errno)));
  std::vector<size_t> ended;
  for (size_t k = 0; k < fds.size(); ++k) {
    if (fds[k].revents == 0) continue;
    char buffer[4096];
    ssize_t n;
    while ((n = read(fds[k].fd, buffer, sizeof buffer)) < 0 && errno == EINTR) {}
    if (n > 0)
      children[k].received.append(buffer, static_cast<size_t>(n));
    else
      ended.push_back(k);  // end of file (or a broken pipe): the child has finished writing
  }
  return ended;
}

// The result of a child whose pipe has closed, once it is reaped; throws what went wrong.
std::string ended_result(Child& child, const std::string& name) {
  const int status = reap(child.pid);
  close(child.fd);
  child.pid = -1;
  const std::string& got = child.received;
  if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM))
    throw_interrupted(WTERMSIG(status));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && got.rfind("ok\n", 0) == 0) return got.substr(3);
  if (got.rfind("error\n", 0) == 0) throw std::runtime_error(fmt::format("{}: {}", name, got.substr(6)));
  if (WIFSIGNALED(status))
    throw std::runtime_error(fmt::format("{}: its process was killed by signal {} ({})", name, WTERMSIG(status),
                                         strsignal(WTERMSIG(status))));
  throw std::runtime_error(fmt::format("{}: its process ended with status {} and no result", name,
                                       WIFEXITED(status) ? WEXITSTATUS(status) : -1));
}

}  // namespace

void run_child_jobs(const std::vector<std::string>& names, int concurrent, const std::function<std::string(int)>& job,
                    const std::function<void(int, const std::string&)>& done) {
  const int count = static_cast<int>(names.size());
  SignalsCaught signals;
  RunningChildren running;  // destroyed first: the children are gone before the handlers change back
  std::vector<Child>& children = running.children;
  for (int next = 0; next < count || !children.empty();) {
    while (next < count && static_cast<int>(children.size()) < std::max(1, concurrent))
      children.push_back(start_child(next++, children, job, signals));
    std::vector<size_t> ended = wait_for_ended(children, signals);
    for (auto k = ended.rbegin(); k != ended.rend(); ++k) {  // from the back: positions stay valid
      Child child = std::move(children[*k]);
      children.erase(children.begin() + static_cast<std::ptrdiff_t>(*k));
      const std::string result = ended_result(child, names[child.index]);
      done(child.index, result);
    }
  }
}

}  // namespace qkv::app
