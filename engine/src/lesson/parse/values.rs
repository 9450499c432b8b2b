//! TOML scalars as the lesson reads them: integers in any radix, numbers as f64, and the name of
//! a value's type for "must be …, found …".

use toml::de::{DeInteger, DeValue};

/// A TOML integer's value (`+1`, `0x10` and `1_000` included).
pub(super) fn integer_value(integer: &DeInteger<'_>) -> Result<i64, std::num::ParseIntError> {
    i64::from_str_radix(integer.as_str(), integer.radix())
}

/// A TOML integer or float as f64, or what is wrong with it.
pub(super) fn number_value(value: &DeValue<'_>) -> Result<f64, String> {
    match value {
        DeValue::Integer(integer) => integer_value(integer)
            .map(|n| n as f64)
            .map_err(|_| "this integer is too large".to_string()),
        DeValue::Float(float) => float
            .as_str()
            .parse::<f64>()
            .map_err(|_| "this number cannot be read".to_string()),
        other => Err(format!("expected a number, found {}", type_name(other))),
    }
}

pub(super) fn type_name(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}
