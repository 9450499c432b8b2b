//! Working lines as written, worked out: a side of an equation the tutor shows, read as
//! arithmetic, so a test can check that it lands on the cell's value.

/// The number an arithmetic side works out to: numbers, `+`, `−`, `×`, `/`, `e^(…)`,
/// `max(…, …)` and brackets, as the working lines write them; `None` for anything else.
pub fn evaluate(text: &str) -> Option<f64> {
    struct Reader<'a>(&'a str);
    impl Reader<'_> {
        fn eat(&mut self, prefix: &str) -> bool {
            self.0 = self.0.trim_start();
            if let Some(rest) = self.0.strip_prefix(prefix) {
                self.0 = rest;
                true
            } else {
                false
            }
        }
        fn sum(&mut self) -> Option<f64> {
            let mut total = self.product()?;
            loop {
                if self.eat("+") {
                    total += self.product()?;
                } else if self.eat("−") {
                    total -= self.product()?;
                } else {
                    return Some(total);
                }
            }
        }
        fn product(&mut self) -> Option<f64> {
            let mut total = self.atom()?;
            loop {
                if self.eat("×") {
                    total *= self.atom()?;
                } else if self.eat("/") {
                    total /= self.atom()?;
                } else {
                    break;
                }
            }
            Some(total)
        }
        fn atom(&mut self) -> Option<f64> {
            if self.eat("e^(") {
                let power = self.sum()?;
                return self.eat(")").then(|| power.exp());
            }
            if self.eat("max(") {
                let mut largest = self.sum()?;
                while self.eat(",") {
                    largest = largest.max(self.sum()?);
                }
                return self.eat(")").then_some(largest);
            }
            if self.eat("(") {
                let inner = self.sum()?;
                return self.eat(")").then_some(inner);
            }
            // A head's terms, bracketed: "[(a × b) + (c × d)] + [...]".
            if self.eat("[") {
                let inner = self.sum()?;
                return self.eat("]").then_some(inner);
            }
            if self.eat("-inf") {
                return Some(f64::NEG_INFINITY);
            }
            let end = self
                .0
                .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e'))
                .unwrap_or(self.0.len());
            let number = self.0[..end].parse().ok()?;
            self.0 = &self.0[end..];
            Some(number)
        }
    }
    let mut reader = Reader(text);
    let value = reader.sum()?;
    reader.0.trim().is_empty().then_some(value)
}
