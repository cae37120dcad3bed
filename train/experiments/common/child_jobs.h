// train/experiments/common/child_jobs.h — independent jobs, each run in a forked child process, a few at a time
// (`qkv demo` trains its models this way). Holds the process handling alone: starting, waiting,
// stopping on a failure or a signal; what a job computes and how it encodes its result are the
// caller's.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace qkv::app {

// Runs job(0) ... job(n - 1) for the n names, each in its own forked child, at most `concurrent`
// at a time, started in index order. A child runs with one CPU thread (the parent's pool workers
// do not exist in it) and sends back the string its job returns; the parent calls done(index,
// result) as each child ends, in the order they end, and otherwise only waits.
//
// A job that throws, or a child that dies, makes the parent kill and reap every other child, then
// throw std::runtime_error "NAME: the job's one-line message". SIGINT or SIGTERM reaching the parent
// (or killing a child) while the jobs run does the same and throws Interrupted (exit status 130).
// Nothing is left running or unreaped on any path; a child whose parent dies is killed too.
void run_child_jobs(const std::vector<std::string>& names, int concurrent,
                    const std::function<std::string(int index)>& job,
                    const std::function<void(int index, const std::string& result)>& done);

}  // namespace qkv::app
