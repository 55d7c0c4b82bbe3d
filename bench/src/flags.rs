//! The command line after a subcommand: `--name value` pairs, shared by the bench and the gate.

/// `--name value` pairs after the subcommand.
pub struct Flags(Vec<(String, String)>);

impl Flags {
    pub fn parse(args: &[String]) -> Result<Flags, String> {
        let mut pairs = Vec::new();
        let mut it = args.iter();
        while let Some(name) = it.next() {
            let Some(name) = name.strip_prefix("--") else {
                return Err(format!("unexpected argument {name:?}"));
            };
            let value = it.next().ok_or_else(|| format!("--{name} needs a value"))?;
            pairs.push((name.to_owned(), value.clone()));
        }
        Ok(Flags(pairs))
    }

    pub fn text(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn required(&self, name: &str) -> Result<&str, String> {
        self.text(name)
            .ok_or_else(|| format!("--{name} is required"))
    }

    pub fn number<T: std::str::FromStr>(&self, name: &str, default: T) -> Result<T, String> {
        match self.text(name) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("--{name} wants a number, got {v:?}")),
        }
    }

    /// A `wrangler dev`'s process-group id.
    pub fn pgid(&self, name: &str) -> Result<i32, String> {
        self.required(name)?
            .parse()
            .map_err(|_| format!("--{name} wants a process-group id"))
    }

    /// Rejects flags the subcommand does not know, so a typo cannot fall back to a default unseen.
    pub fn only(&self, known: &[&str]) -> Result<(), String> {
        match self.0.iter().find(|(k, _)| !known.contains(&k.as_str())) {
            Some((k, _)) => Err(format!("unknown flag --{k}")),
            None => Ok(()),
        }
    }
}
