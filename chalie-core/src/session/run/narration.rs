//! Narrated actions: a reply that announces a tool call ("I need to fetch
//! your tasks…") instead of making it.

/// Openers of a reply that announces an action rather than taking it.
const OPENERS: &[&str] = &[
    "i need to ",
    "i'll ",
    "i will ",
    "let me ",
    "i'm going to ",
    "i am going to ",
    "i'm fetching ",
    "i am fetching ",
    "i'm checking ",
    "i am checking ",
    "i'm looking ",
    "i am looking ",
    "one moment",
    "give me a moment",
];

/// How the run spots a narrated action. The text is held back from the
/// client while it could still be one, so discarded prose never streams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Narration {
    /// A reply longer than this is an answer, whatever its opening.
    pub(crate) max_chars: usize,
}

impl Default for Narration {
    fn default() -> Self {
        Self { max_chars: 300 }
    }
}

/// What the text so far says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Too short to tell: keep holding.
    Undecided,
    /// It opens like a narration: hold it to the end.
    Suspect,
    /// An answer: stream it.
    Answer,
}

impl Narration {
    /// Judges the start of a reply.
    pub(crate) fn judge(&self, text: &str) -> Verdict {
        let start = text.trim_start().to_lowercase();
        if start.chars().count() > self.max_chars {
            return Verdict::Answer;
        }
        if OPENERS.iter().any(|opener| start.starts_with(opener)) {
            return Verdict::Suspect;
        }
        if OPENERS
            .iter()
            .any(|opener| opener.starts_with(start.as_str()))
        {
            return Verdict::Undecided;
        }
        Verdict::Answer
    }

    /// Whether a whole reply, with no tool call, is a narrated action.
    pub(crate) fn is_narration(&self, text: &str) -> bool {
        self.judge(text) == Verdict::Suspect
    }
}

/// What the model is told when it narrated instead of acting.
pub(crate) const RETRY_INSTRUCTION: &str = "Your last reply described an action instead of taking it. If one of your tools can do it, call the tool now. Otherwise answer the user directly. Do not describe what you are about to do.";

/// What the model is told when the session's rate limit stops tool calls.
pub(crate) const RATE_LIMITED_INSTRUCTION: &str = "The session's tool-call rate limit was reached: no more tools can be called in this run. Answer now with what you have, and tell the user which steps could not be done.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openers_are_held_then_judged() {
        let narration = Narration::default();
        assert_eq!(narration.judge(""), Verdict::Undecided);
        assert_eq!(narration.judge("I"), Verdict::Undecided);
        assert_eq!(narration.judge("I need"), Verdict::Undecided);
        assert_eq!(
            narration.judge("I need to fetch your tasks"),
            Verdict::Suspect
        );
        assert_eq!(narration.judge("You have two tasks."), Verdict::Answer);
        assert_eq!(narration.judge("It"), Verdict::Answer);
        assert!(!narration.is_narration(&format!("I'll {}", "x".repeat(400))));
    }
}
