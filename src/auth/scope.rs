//! What a request's credential may reach (`Scope`), and the proofs that the store demands for
//! every project read and write: `Readable`, `Writable`, `Reach` and `WriteReach`. Only the
//! methods of `Scope` here make them (their fields are private to this module), so a surface
//! that forgets to ask the scope has no proof to hand the store and does not compile. No I/O,
//! no token and no sentence here: a refusal is worded by the surface that refuses.

use crate::base64;
use crate::model;

/// What the request's credential may reach. The credential table (`config`) makes it from a
/// token, and the SSE object from `from_wire`; every surface that shows or changes project
/// state turns it into a proof before reaching storage. There is no default: whoever builds a
/// `Caller` must say which scope it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// An `AUTH_TOKEN` token: every project, read and write.
    All,
    /// Every project, read only: an OAuth grant narrowed so on the consent page.
    AllReadOnly,
    /// A `PROJECT_TOKENS` entry: one project, and writes only when `write` is set.
    Project { id: String, write: bool },
}

/// The name a full-access token (`AUTH_TOKEN`) writes under.
pub const OWNER: &str = "owner";

/// A request's accepted credential: what it reaches, and the OAuth grant it came through, if it
/// is an access token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credential {
    pub scope: Scope,
    pub grant: Option<Grant>,
    /// The project token made on the page, when the credential is one.
    pub minted: Option<Box<Minted>>,
}

impl Credential {
    /// A configured token's credential (a path token, a bearer token that is not OAuth's).
    pub fn token(scope: Scope) -> Credential {
        Credential {
            scope,
            grant: None,
            minted: None,
        }
    }

    /// The credential's name as the history records who made a change: an OAuth grant's
    /// client (whose name the person saw on the consent page), a project token's label (which
    /// the owner gave it), `owner` for a full-access token, `project token` for one of
    /// `PROJECT_TOKENS`.
    pub fn name(&self) -> &str {
        match (&self.grant, &self.minted, &self.scope) {
            (Some(grant), _, _) => &grant.client,
            (None, Some(minted), _) => &minted.label,
            (None, None, Scope::All) => OWNER,
            (None, None, Scope::AllReadOnly) => "read-only token",
            (None, None, Scope::Project { .. }) => "project token",
        }
    }

    /// Whether this is the owner's: a full-access token (`AUTH_TOKEN`), the one credential
    /// that shares a project, takes a share back and deletes a project.
    pub fn is_owner(&self) -> bool {
        self.scope == Scope::All && self.grant.is_none() && self.minted.is_none()
    }

    /// The credential as one line of ASCII, for the Worker to hand to the SSE Durable Object:
    /// the scope's wire form, then for a grant its id and its client's name, for a project
    /// token `t`, its id, its hash and its label (names in URL-safe base64, since a header
    /// carries only ASCII), separated by spaces.
    pub fn to_wire(&self) -> String {
        let scope = self.scope.to_wire();
        match (&self.grant, &self.minted) {
            (Some(grant), _) => format!(
                "{scope} {} {}",
                grant.id,
                base64::url_encode(grant.client.as_bytes())
            ),
            (None, Some(minted)) => format!(
                "{scope} t {} {} {}",
                minted.id,
                minted.hash,
                base64::url_encode(minted.label.as_bytes())
            ),
            (None, None) => scope,
        }
    }

    /// The credential `to_wire` wrote; `None` for anything else.
    pub fn from_wire(wire: &str) -> Option<Credential> {
        let parts: Vec<&str> = wire.split(' ').collect();
        let mut credential = Credential::token(Scope::from_wire(parts[0])?);
        let name = |text: &str| String::from_utf8(base64::url_decode(text)?).ok();
        match parts[1..] {
            [] => {}
            [id, client] if !id.is_empty() => {
                credential.grant = Some(Grant {
                    id: id.to_owned(),
                    client: name(client)?,
                })
            }
            ["t", id, hash, label] if !id.is_empty() && !hash.is_empty() => {
                credential.minted = Some(Box::new(Minted {
                    id: id.to_owned(),
                    hash: hash.to_owned(),
                    label: name(label)?,
                }))
            }
            _ => return None,
        }
        Some(credential)
    }
}

/// A project token made on the page (`seal::ProjectToken`): its row's id and the hash the row
/// must hold, which every storage batch of the request checks is still live
/// (`store::guard::Guarded`), and its label, which the history names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Minted {
    pub id: String,
    pub hash: String,
    pub label: String,
}

/// The OAuth grant behind an access token: its id, which every storage batch of the request
/// checks is still live (`store::Guarded`), and the client's name as the history records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub id: String,
    pub client: String,
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
            Scope::All | Scope::AllReadOnly => true,
            Scope::Project { id, .. } => id == project,
        };
        allowed.then_some(Readable { id: project })
    }

    /// The proof that the caller may write `project`, if it may.
    pub fn writable<'a>(&self, project: &'a str) -> Option<Writable<'a>> {
        let allowed = match self {
            Scope::All => true,
            Scope::AllReadOnly => false,
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

    /// Whether everything `inner` reaches, this reaches too: an OAuth grant is never wider than
    /// the token it was made with.
    pub fn covers(&self, inner: &Scope) -> bool {
        match (self, inner) {
            (Scope::All, _) => true,
            (Scope::AllReadOnly, inner) => inner.read_only(),
            (Scope::Project { .. }, Scope::All | Scope::AllReadOnly) => false,
            (Scope::Project { id, write }, Scope::Project { id: i, write: w }) => {
                id == i && (*write || !*w)
            }
        }
    }

    /// Whether the credential may write nothing at all.
    pub fn read_only(&self) -> bool {
        matches!(
            self,
            Scope::AllReadOnly | Scope::Project { write: false, .. }
        )
    }

    /// The one project a scoped credential reaches; `None` when it reaches them all.
    pub fn project(&self) -> Option<&str> {
        match self {
            Scope::All | Scope::AllReadOnly => None,
            Scope::Project { id, .. } => Some(id),
        }
    }

    /// The scope as one line of text, for the Worker to hand to the SSE Durable Object and for
    /// an OAuth grant to keep: `all`, `ro:*`, `rw:<project>` or `ro:<project>`. A project id
    /// holds no `:`, `*`, space or line break.
    pub fn to_wire(&self) -> String {
        match self {
            Scope::All => "all".into(),
            Scope::AllReadOnly => "ro:*".into(),
            Scope::Project { id, write: true } => format!("rw:{id}"),
            Scope::Project { id, write: false } => format!("ro:{id}"),
        }
    }

    /// The scope `to_wire` wrote; `None` for anything else, so a garbled value reaches nothing.
    pub fn from_wire(wire: &str) -> Option<Scope> {
        match wire {
            "all" => return Some(Scope::All),
            "ro:*" => return Some(Scope::AllReadOnly),
            _ => {}
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
        let other = Scope::Project {
            id: "q".into(),
            write: true,
        };
        for (outer, inner, covers) in [
            (&Scope::All, &Scope::All, true),
            (&Scope::All, &ro, true),
            (&rw, &ro, true),
            (&rw, &rw, true),
            (&ro, &rw, false),
            (&ro, &ro, true),
            (&rw, &Scope::All, false),
            (&rw, &other, false),
            (&Scope::AllReadOnly, &ro, true),
            (&Scope::AllReadOnly, &rw, false),
            (&Scope::AllReadOnly, &Scope::All, false),
            (&Scope::All, &Scope::AllReadOnly, true),
            (&ro, &Scope::AllReadOnly, false),
        ] {
            assert_eq!(outer.covers(inner), covers, "{outer:?} {inner:?}");
        }
        let all_ro = Scope::AllReadOnly;
        assert_eq!(
            (reads(&all_ro, "x"), writes(&all_ro, "x")),
            (Some("x"), None)
        );
        assert!(all_ro.read_only() && all_ro.write_reach().is_none());
        assert_eq!((all_ro.project(), all_ro.reach().only()), (None, None));
        for scope in [Scope::All, Scope::AllReadOnly, rw, ro] {
            assert_eq!(Scope::from_wire(&scope.to_wire()), Some(scope.clone()));
            let token = Credential::token(scope.clone());
            assert_eq!(Credential::from_wire(&token.to_wire()), Some(token));
            let granted = Credential {
                grant: Some(Grant {
                    id: "0b7c-1".into(),
                    client: "Claude 日本 (OAuth)".into(),
                }),
                ..Credential::token(scope.clone())
            };
            let minted = Credential {
                minted: Some(Box::new(Minted {
                    id: "9f3a".into(),
                    hash: "00ff".into(),
                    label: "青木's laptop".into(),
                })),
                ..Credential::token(scope)
            };
            for credential in [granted, minted] {
                let wire = credential.to_wire();
                assert!(wire.is_ascii() && !wire.contains('\n'), "{wire}");
                assert_eq!(Credential::from_wire(&wire), Some(credential));
            }
        }
        for garbled in [
            "all x",
            "all x y z",
            "all  eA",
            "all x !!",
            "all t x y",
            "all t  y eA",
            "all t x  eA",
            "all t x y !!",
            "all t x y eA z",
        ] {
            assert_eq!(Credential::from_wire(garbled), None, "{garbled:?}");
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
            "rw:*",
        ] {
            assert_eq!(Scope::from_wire(garbled), None, "{garbled:?}");
        }
    }
}
