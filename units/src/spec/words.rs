//! [`Words`]: a command's words in one block.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::sync::Arc;

/// The words of a command (`argv`), kept in one shared block: each word
/// followed by a byte that no UTF-8 text holds (`0xFF`), so that any word,
/// even one with a NUL (which the unit checks refuse, by reading it), is
/// kept as it was given. One block rather than a list and a block per
/// word: every loaded unit has a command or two, and the planner hands
/// the same words to each spawn (a count, not a copy).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Words(Arc<[u8]>);

/// What ends each word: a byte never found in UTF-8.
const END: u8 = 0xFF;

impl Words {
    /// The words of `words`, in order.
    pub fn new<I, S>(words: I) -> Words
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut bytes = Vec::new();
        for w in words {
            bytes.extend_from_slice(w.as_ref().as_bytes());
            bytes.push(END);
        }
        Words(bytes.into())
    }

    /// The words, in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &str> + Clone + '_ {
        // Without its last end, each word is a part between two ends.
        let body = self.0.split_last().map_or(&[][..], |(_, body)| body);
        let parts = (!self.0.is_empty()).then(|| body.split(|&b| b == END));
        // Each part is whole UTF-8: it was a `str`, cut where no UTF-8
        // byte is.
        parts
            .into_iter()
            .flatten()
            .map(|w| std::str::from_utf8(w).unwrap_or_default())
    }

    /// How many words.
    pub fn len(&self) -> usize {
        self.0.iter().filter(|&&b| b == END).count()
    }

    /// No word at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The first word: the program.
    pub fn first(&self) -> Option<&str> {
        self.iter().next()
    }

    /// The words as strings of their own.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_string).collect()
    }

    /// The words with `sep` between them.
    pub fn join(&self, sep: &str) -> String {
        self.iter().collect::<Vec<_>>().join(sep)
    }
}

impl fmt::Debug for Words {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<S: AsRef<str>> FromIterator<S> for Words {
    fn from_iter<I: IntoIterator<Item = S>>(words: I) -> Words {
        Words::new(words)
    }
}

impl<S: AsRef<str>, const N: usize> PartialEq<[S; N]> for Words {
    fn eq(&self, other: &[S; N]) -> bool {
        self.iter().eq(other.iter().map(AsRef::as_ref))
    }
}

impl<S: AsRef<str>> PartialEq<[S]> for Words {
    fn eq(&self, other: &[S]) -> bool {
        self.iter().eq(other.iter().map(AsRef::as_ref))
    }
}

impl<S: AsRef<str>> PartialEq<Vec<S>> for Words {
    fn eq(&self, other: &Vec<S>) -> bool {
        *self == other[..]
    }
}

/// Written as a list of words.
impl Serialize for Words {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// Read as a list of words.
impl<'de> Deserialize<'de> for Words {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Words, D::Error> {
        Vec::<String>::deserialize(d).map(Words::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_comes_back_as_given_even_empty_ones_and_a_nul() {
        for words in [
            vec![],
            vec![""],
            vec!["", ""],
            vec!["/bin/sleep", "3600"],
            vec!["/bin/sh", "-c", ""],
            vec!["a\0b", "ü", "€ \t\n"],
        ] {
            let w = Words::new(&words);
            assert_eq!(w.iter().collect::<Vec<_>>(), words);
            assert_eq!(w.len(), words.len());
            assert_eq!(w.is_empty(), words.is_empty());
            assert_eq!(w.first(), words.first().copied());
            assert_eq!(w, words);
            assert_eq!(w.to_vec(), words);
            assert_eq!(w.join(" "), words.join(" "));
        }
        assert_ne!(Words::new(["a b"]), Words::new(["a", "b"]));
        assert_ne!(Words::new::<[&str; 0], &str>([]), Words::new([""]));
    }

    #[test]
    fn json_is_a_list_of_words() {
        let w = Words::new(["/bin/echo", "a\0b", ""]);
        let json = serde_json::to_string(&w).unwrap();
        assert_eq!(json, r#"["/bin/echo","a\u0000b",""]"#);
        let back: Words = serde_json::from_str(&json).unwrap();
        assert_eq!(back, w);
        assert_eq!(format!("{w:?}"), r#"["/bin/echo", "a\0b", ""]"#);
    }
}
