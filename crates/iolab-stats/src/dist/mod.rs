//! Distribution functions implemented here rather than pulled from a crate: the crate needs only
//! the normal and Student-t distributions, and owning them lets the tests pin them against
//! published tables.

pub mod normal;
mod special;
pub mod student_t;

pub use normal::{normal_cdf, normal_quantile, normal_sf};
pub use student_t::StudentT;
