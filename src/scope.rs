//! What a request's credential may reach (`Scope`), and the proofs that the store demands for
//! every project read and write: `Readable`, `Writable`, `Reach` and `WriteReach`. Only the
//! methods of `Scope` here make them (their fields are private to this module), so a surface
//! that forgets to ask the scope has no proof to hand the store and does not compile. No I/O,
//! no token and no sentence here: a refusal is worded by the surface that refuses.

use crate::model;

/// What the request's credential may reach. The credential table (`config`) makes it from a
/// token, and the SSE object from `from_wire`; every surface that shows or changes project
/// state turns it into a proof before reaching storage. There is no default: whoever builds a
/// `Caller` must say which scope it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// An `AUTH_TOKEN` token: every project, read and write.
    All,
    /// A `PROJECT_TOKENS` entry: one project, and writes only when `write` is set.
    Project { id: String, write: bool },
}

/// Proof that the caller may read this one project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Readable<'a> {
    id: &'a str,
}

/// Proof that the caller may write this one project (creating it included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Writable<'a> {
    id: &'a str,
}

/// Proof of which projects the caller may read: every one, or one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reach<'a> {
    only: Option<&'a str>,
}

/// Proof that the caller may write, and of which projects: every one, or one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteReach<'a> {
    only: Option<&'a str>,
}

impl Scope {
    /// The proof that the caller may read `project`, if it may.
    pub fn readable<'a>(&self, project: &'a str) -> Option<Readable<'a>> {
        let allowed = match self {
            Scope::All => true,
            Scope::Project { id, .. } => id == project,
        };
        allowed.then_some(Readable { id: project })
    }

    /// The proof that the caller may write `project`, if it may.
    pub fn writable<'a>(&self, project: &'a str) -> Option<Writable<'a>> {
        let allowed = match self {
            Scope::All => true,
            Scope::Project { id, write } => *write && id == project,
        };
        allowed.then_some(Writable { id: project })
    }

    /// The projects the caller may read.
    pub fn reach(&self) -> Reach<'_> {
        Reach {
            only: self.project(),
        }
    }

    /// The projects the caller may write; `None` for a read-only credential.
    pub fn write_reach(&self) -> Option<WriteReach<'_>> {
        (!self.read_only()).then_some(WriteReach {
            only: self.project(),
        })
    }

    /// Whether the credential may write nothing at all.
    pub fn read_only(&self) -> bool {
        matches!(self, Scope::Project { write: false, .. })
    }

    /// The one project a scoped credential reaches; `None` when it reaches them all.
    pub fn project(&self) -> Option<&str> {
        match self {
            Scope::All => None,
            Scope::Project { id, .. } => Some(id),
        }
    }

    /// The scope as one line of text, for the Worker to hand to the SSE Durable Object: `all`,
    /// `rw:<project>` or `ro:<project>`. A project id holds no `:`, space or line break.
    pub fn to_wire(&self) -> String {
        match self {
            Scope::All => "all".into(),
            Scope::Project { id, write: true } => format!("rw:{id}"),
            Scope::Project { id, write: false } => format!("ro:{id}"),
        }
    }

    /// The scope `to_wire` wrote; `None` for anything else, so a garbled value reaches nothing.
    pub fn from_wire(wire: &str) -> Option<Scope> {
        if wire == "all" {
            return Some(Scope::All);
        }
        let (access, id) = wire.split_once(':')?;
        let write = match access {
            "rw" => true,
            "ro" => false,
            _ => return None,
        };
        model::is_project_id(id).then(|| Scope::Project {
            id: id.to_owned(),
            write,
        })
    }
}

impl<'a> Readable<'a> {
    pub fn id(&self) -> &'a str {
        self.id
    }

    /// The reach of this one project, for a search within it.
    pub fn reach(self) -> Reach<'a> {
        Reach {
            only: Some(self.id),
        }
    }
}

impl<'a> Writable<'a> {
    pub fn id(&self) -> &'a str {
        self.id
    }

    /// A writer may read what it writes.
    pub fn readable(self) -> Readable<'a> {
        Readable { id: self.id }
    }
}

impl<'a> Reach<'a> {
    /// The one project it reaches; `None` for every project.
    pub fn only(&self) -> Option<&'a str> {
        self.only
    }
}

impl<'a> WriteReach<'a> {
    /// The one project it reaches; `None` for every project.
    pub fn only(&self) -> Option<&'a str> {
        self.only
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_and_their_proofs() {
        let rw = Scope::Project {
            id: "p".into(),
            write: true,
        };
        let ro = Scope::Project {
            id: "p".into(),
            write: false,
        };
        let reads = |s: &Scope, p| s.readable(p).map(|r| r.id());
        let writes = |s: &Scope, p| s.writable(p).map(|w| w.id());
        assert_eq!(
            (reads(&Scope::All, "x"), writes(&Scope::All, "x")),
            (Some("x"), Some("x"))
        );
        assert!(!Scope::All.read_only());
        assert_eq!((reads(&rw, "p"), writes(&rw, "p")), (Some("p"), Some("p")));
        assert_eq!((reads(&rw, "q"), writes(&rw, "q")), (None, None));
        assert_eq!((reads(&ro, "p"), writes(&ro, "p")), (Some("p"), None));
        assert!(ro.read_only() && !rw.read_only());
        assert_eq!(reads(&ro, "P"), None, "project ids are case-sensitive");
        assert_eq!((Scope::All.project(), ro.project()), (None, Some("p")));
        assert_eq!(
            (Scope::All.reach().only(), ro.reach().only()),
            (None, Some("p"))
        );
        assert_eq!(Scope::All.write_reach().map(|w| w.only()), Some(None));
        assert_eq!(rw.write_reach().map(|w| w.only()), Some(Some("p")));
        assert_eq!(ro.write_reach(), None);
        assert_eq!(
            rw.writable("p").map(|w| w.readable().reach().only()),
            Some(Some("p"))
        );
        for scope in [Scope::All, rw, ro] {
            assert_eq!(Scope::from_wire(&scope.to_wire()), Some(scope));
        }
        for garbled in [
            "",
            "ALL",
            "rw:",
            "rw:a b",
            "xx:p",
            "ro",
            "all:p",
            "rw:p\nall",
        ] {
            assert_eq!(Scope::from_wire(garbled), None, "{garbled:?}");
        }
    }
}
