//! Job-file value substitution as fio does it: `${VAR}` from the environment, then fio's
//! keywords `$pagesize`, `$mb_memory` and `$ncpus`, and then, when a keyword was replaced
//! and the value is arithmetic (`$ncpus*2`, `$mb_memory/4`), the arithmetic worked out in
//! whole numbers with the usual precedence (fio hands such values to `bc`, whose default
//! scale truncates division the same way).
//!
//! fio applies these to job files only, not to the command line (where the shell already
//! expands `$…`); iobench does the same.

/// Expands `${VAR}` from the environment; an unset variable expands to nothing, as in fio.
pub fn expand_env(s: &str) -> String {
    expand_env_with(s, |name| std::env::var(name).ok())
}

/// Expands `${VAR}` with `lookup` supplying each variable's value (tests use a fixed map).
pub fn expand_env_with(s: &str, lookup: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        match rest[start + 2..].find('}') {
            // fio needs at least one character between the braces.
            Some(end) if end > 0 => {
                let var = &rest[start + 2..start + 2 + end];
                out.push_str(&lookup(var).unwrap_or_default());
                rest = &rest[start + 2 + end + 1..];
            }
            _ => {
                out.push_str(&rest[start..start + 2]);
                rest = &rest[start + 2..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The machine facts fio's keywords stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Machine {
    pub pagesize: u64,
    pub mb_memory: u64,
    pub ncpus: u64,
}

impl Machine {
    /// This machine: the page size, physical memory in MiB and configured CPUs.
    pub fn current() -> Machine {
        // SAFETY: sysconf only reads system configuration; it has no memory effects.
        let (page, pages, cpus) = unsafe {
            (
                libc::sysconf(libc::_SC_PAGESIZE),
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_NPROCESSORS_CONF),
            )
        };
        let page = u64::try_from(page).unwrap_or(4096).max(1);
        let pages = u64::try_from(pages).unwrap_or(0);
        Machine {
            pagesize: page,
            mb_memory: pages.saturating_mul(page) / (1024 * 1024),
            ncpus: u64::try_from(cpus).unwrap_or(1).max(1),
        }
    }
}

/// Replaces fio's keywords in `value` and works out any arithmetic they take part in.
/// Text without a keyword is returned unchanged (fio does no arithmetic there either);
/// text with a keyword that is not a pure arithmetic expression keeps the replaced text,
/// so the option's own parser reports it.
pub fn replace_keywords(value: &str, m: &Machine) -> Result<String, String> {
    const WORDS: [&str; 3] = ["$pagesize", "$mb_memory", "$ncpus"];
    if !WORDS.iter().any(|w| value.contains(w)) {
        return Ok(value.to_string());
    }
    let replaced = value
        .replace("$pagesize", &m.pagesize.to_string())
        .replace("$mb_memory", &m.mb_memory.to_string())
        .replace("$ncpus", &m.ncpus.to_string());
    let is_math = replaced.contains(['+', '-', '*', '/'])
        && replaced
            .bytes()
            .all(|b| b.is_ascii_digit() || b" \t+-*/%^()".contains(&b));
    if !is_math {
        return Ok(replaced);
    }
    eval(&replaced).map(|n| n.to_string())
}

/// Works out a whole-number expression: `+ - * / % ^`, parentheses and unary minus, with
/// `bc`'s precedence (`^` binds tightest and to the right). Every error is a message, never
/// a panic: overflow, division by zero, a missing operand or parenthesis.
pub fn eval(expr: &str) -> Result<i64, String> {
    let tokens = tokenize(expr)?;
    let mut p = Parser {
        tokens: &tokens,
        pos: 0,
        depth: 0,
    };
    let v = p.sum()?;
    if p.pos != tokens.len() {
        return Err(format!("'{expr}' is not a complete arithmetic expression"));
    }
    Ok(v)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok {
    Num(i64),
    Op(u8),
}

fn tokenize(expr: &str) -> Result<Vec<Tok>, String> {
    let bytes = expr.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() {
            i += 1;
        } else if b.is_ascii_digit() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            let n = expr[start..i]
                .parse()
                .map_err(|_| format!("'{}' is too large", &expr[start..i]))?;
            out.push(Tok::Num(n));
        } else if b"+-*/%^()".contains(&b) {
            out.push(Tok::Op(b));
            i += 1;
        } else {
            return Err(format!("'{expr}' has '{}' in its arithmetic", b as char));
        }
    }
    Ok(out)
}

/// A recursive-descent reader over the tokens; `depth` bounds nesting so hostile input
/// cannot exhaust the stack.
struct Parser<'a> {
    tokens: &'a [Tok],
    pos: usize,
    depth: usize,
}

const MAX_DEPTH: usize = 64;

impl Parser<'_> {
    fn peek(&self) -> Option<Tok> {
        self.tokens.get(self.pos).copied()
    }

    fn overflow() -> String {
        "arithmetic overflow".to_string()
    }

    fn sum(&mut self) -> Result<i64, String> {
        let mut v = self.product()?;
        while let Some(Tok::Op(op @ (b'+' | b'-'))) = self.peek() {
            self.pos += 1;
            let r = self.product()?;
            v = if op == b'+' {
                v.checked_add(r)
            } else {
                v.checked_sub(r)
            }
            .ok_or_else(Self::overflow)?;
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<i64, String> {
        let mut v = self.power()?;
        while let Some(Tok::Op(op @ (b'*' | b'/' | b'%'))) = self.peek() {
            self.pos += 1;
            let r = self.power()?;
            v = match op {
                b'*' => v.checked_mul(r).ok_or_else(Self::overflow)?,
                _ if r == 0 => return Err("division by zero".to_string()),
                b'/' => v.checked_div(r).ok_or_else(Self::overflow)?,
                _ => v.checked_rem(r).ok_or_else(Self::overflow)?,
            };
        }
        Ok(v)
    }

    fn power(&mut self) -> Result<i64, String> {
        let base = self.unary()?;
        if let Some(Tok::Op(b'^')) = self.peek() {
            self.pos += 1;
            self.enter()?;
            let exp = self.power();
            self.depth -= 1;
            let exp = exp?;
            if exp < 0 {
                return Ok(0);
            }
            let exp = u32::try_from(exp).map_err(|_| Self::overflow())?;
            return base.checked_pow(exp).ok_or_else(Self::overflow);
        }
        Ok(base)
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("arithmetic nested too deeply".to_string());
        }
        Ok(())
    }

    fn unary(&mut self) -> Result<i64, String> {
        match self.peek() {
            Some(Tok::Op(b'-')) => {
                self.pos += 1;
                self.enter()?;
                let v = self.unary();
                self.depth -= 1;
                v?.checked_neg().ok_or_else(Self::overflow)
            }
            Some(Tok::Op(b'+')) => {
                self.pos += 1;
                self.enter()?;
                let v = self.unary();
                self.depth -= 1;
                v
            }
            Some(Tok::Op(b'(')) => {
                self.pos += 1;
                self.enter()?;
                let v = self.sum();
                self.depth -= 1;
                let v = v?;
                if self.peek() != Some(Tok::Op(b')')) {
                    return Err("a '(' has no matching ')'".to_string());
                }
                self.pos += 1;
                Ok(v)
            }
            Some(Tok::Num(n)) => {
                self.pos += 1;
                Ok(n)
            }
            _ => Err("a number is missing in the arithmetic".to_string()),
        }
    }
}
