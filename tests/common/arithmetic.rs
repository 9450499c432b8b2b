//! Working lines as written, worked out: a side of an equation the tutor shows, read as
//! arithmetic, so a test can redo it and check that it lands on what the line says.

/// The number an arithmetic side works out to, as the working lines write it: numbers
/// (`-0.445`, `5.185e21`, `-inf`), `+ − - × · / ^`, brackets, `exp(…)`, `e^(…)`, `sin(…)`,
/// `cos(…)`, `max(…, …)` and `√n`. `None` for anything else (a name, `Σ`), which is then not an
/// equality a learner can redo by hand.
pub fn evaluate(text: &str) -> Option<f64> {
    let mut parser = Parser {
        chars: text.chars().filter(|c| !c.is_whitespace()).collect(),
        at: 0,
    };
    let value = parser.sum()?;
    (parser.at == parser.chars.len()).then_some(value)
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn eat(&mut self, text: &str) -> bool {
        let wanted: Vec<char> = text.chars().collect();
        if self.chars[self.at..].starts_with(&wanted) {
            self.at += wanted.len();
            true
        } else {
            false
        }
    }

    fn sum(&mut self) -> Option<f64> {
        let mut value = self.product()?;
        loop {
            if self.eat("+") {
                value += self.product()?;
            } else if self.eat("−") || self.eat("-") {
                value -= self.product()?;
            } else {
                return Some(value);
            }
        }
    }

    fn product(&mut self) -> Option<f64> {
        let mut value = self.power()?;
        loop {
            if self.eat("×") || self.eat("·") {
                value *= self.power()?;
            } else if self.eat("/") {
                value /= self.power()?;
            } else {
                return Some(value);
            }
        }
    }

    fn power(&mut self) -> Option<f64> {
        let base = self.unary()?;
        if self.eat("^") {
            Some(base.powf(self.unary()?))
        } else {
            Some(base)
        }
    }

    fn unary(&mut self) -> Option<f64> {
        if self.eat("−") || self.eat("-") {
            return Some(-self.unary()?);
        }
        if self.eat("√") {
            return Some(self.unary()?.sqrt());
        }
        if self.eat("e^") {
            return Some(self.unary()?.exp());
        }
        for (name, function) in [
            ("exp", f64::exp as fn(f64) -> f64),
            ("sin", f64::sin),
            ("cos", f64::cos),
        ] {
            if self.eat(name) {
                return self.group('(', ')').map(function);
            }
        }
        if self.eat("max(") {
            let mut most = self.sum()?;
            while self.eat(",") {
                most = most.max(self.sum()?);
            }
            return self.eat(")").then_some(most);
        }
        if self.eat("inf") {
            return Some(f64::INFINITY);
        }
        match self.peek()? {
            '(' => self.group('(', ')'),
            '[' => self.group('[', ']'),
            _ => self.number(),
        }
    }

    fn group(&mut self, open: char, close: char) -> Option<f64> {
        if self.peek()? != open {
            return None;
        }
        self.at += 1;
        let value = self.sum()?;
        (self.peek()? == close).then(|| self.at += 1)?;
        Some(value)
    }

    fn number(&mut self) -> Option<f64> {
        let start = self.at;
        while let Some(c) = self.peek() {
            let exponent_sign =
                (c == '-' || c == '+') && self.at > start && self.chars[self.at - 1] == 'e';
            if c.is_ascii_digit() || c == '.' || c == 'e' || exponent_sign {
                self.at += 1;
            } else {
                break;
            }
        }
        let text: String = self.chars[start..self.at].iter().collect();
        text.parse().ok()
    }
}

/// Half a unit of the last decimal `written` shows (at least `decimals` decimals: a whole
/// or trimmed number stands for the lesson's precision), with room for binary rounding.
pub fn half_unit(written: &str, decimals: usize) -> f64 {
    let written = written.trim();
    let (mantissa, exponent) = match written.split_once('e') {
        Some((mantissa, exponent)) => (mantissa, exponent.parse::<i32>().unwrap_or(0)),
        None => (written, 0),
    };
    let shown = mantissa.split_once('.').map_or(0, |(_, f)| f.len());
    let places = if written.contains('e') {
        shown as i32 - exponent
    } else {
        shown.max(decimals) as i32
    };
    0.5 * 10f64.powi(-places) * (1.0 + 1e-9)
        + 1e-12
            * evaluate(written)
                .filter(|v| v.is_finite())
                .unwrap_or(0.0)
                .abs()
}

/// A working line's result as the tutor writes it: as the step's table does (0.0280), a whole
/// number bare (1), so a test can compare it with the cell's value.
pub fn as_written(value: f64, decimals: usize) -> String {
    if value.fract() == 0.0 || !value.is_finite() {
        attn_tutor::attention::number::format_number(value, decimals)
    } else {
        attn_tutor::attention::number::format_fixed(value, decimals)
    }
}
