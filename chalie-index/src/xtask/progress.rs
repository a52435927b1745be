//! Progress of long steps (embedding a catalog, running an eval) as a bar with the rate and
//! the time left, drawn only when both stdout and stderr are terminals: a CI log, a pipe or
//! a redirected run gets the result lines and nothing else.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::{BuildProgress, BuildStage};

/// One bar on stderr, or nothing at all off a terminal.
pub(super) struct Progress {
    bar: ProgressBar,
}

/// Whether a person is watching: stdout and stderr are both terminals.
fn watched() -> bool {
    std::io::stdout().is_terminal() && std::io::stderr().is_terminal()
}

impl Progress {
    /// A bar labelled `label` over `total` units, visible when someone is watching.
    pub(super) fn new(label: &str, total: usize) -> Progress {
        Progress::drawn_if(watched(), label, total)
    }

    fn drawn_if(visible: bool, label: &str, total: usize) -> Progress {
        let target = if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(total as u64), target);
        if let Ok(style) = ProgressStyle::with_template(
            "{msg:>10} [{bar:32}] {human_pos}/{human_len} {per_sec:>12} {eta:>4} left",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(label.to_owned());
        Progress { bar }
    }

    /// Moves the bar to `done` of `total`.
    pub(super) fn set(&self, done: usize, total: usize) {
        self.bar.set_length(total as u64);
        self.bar.set_position(done as u64);
    }

    /// Advances the bar by `units`.
    pub(super) fn advance(&self, units: usize) {
        self.bar.inc(units as u64);
    }

    /// Relabels the bar for the next phase, restarting its rate and time left.
    pub(super) fn phase(&self, label: &str, total: usize) {
        self.bar.set_message(label.to_owned());
        self.bar.set_length(total as u64);
        self.bar.reset();
    }

    /// Prints `line` on stderr, always, with the bar (if any) lifted out of its way.
    pub(super) fn warn(&self, line: &str) {
        self.bar.suspend(|| eprintln!("warning: {line}"));
    }

    /// Whether nothing is drawn.
    #[cfg(test)]
    fn is_hidden(&self) -> bool {
        self.bar.is_hidden()
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        // The result line printed next replaces the bar; a bar left behind would repeat it.
        self.bar.finish_and_clear();
    }
}

/// A [`BuildProgress`] listener drawing `progress`: embedding, then writing.
pub(super) fn build_listener(progress: &Progress) -> impl FnMut(BuildProgress) + '_ {
    let mut stage = BuildStage::Embedding;
    move |report: BuildProgress| {
        if report.stage != stage {
            stage = report.stage;
            progress.phase("writing", report.total);
        }
        progress.set(report.done, report.total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_a_terminal_nothing_is_drawn() {
        let progress = Progress::drawn_if(false, "embedding", 10);
        assert!(progress.is_hidden());
        let mut listen = build_listener(&progress);
        listen(BuildProgress {
            stage: BuildStage::Embedding,
            done: 5,
            total: 10,
        });
        listen(BuildProgress {
            stage: BuildStage::Writing,
            done: 1,
            total: 3,
        });
        assert_eq!(progress.bar.position(), 1);
        assert_eq!(progress.bar.length(), Some(3));
        assert_eq!(progress.bar.message(), "writing");
    }
}
