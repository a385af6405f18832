//! The definitions tier: what an option is ([`OptDef`], built with [`opt`]) and how values
//! are written ([`value`]). Engines declare their option rows with these and read them;
//! the catalog (`options`) assembles the table above them.

pub mod datapattern;
pub mod ddir;
pub mod optdef;
pub mod percentiles;
pub mod raw;
pub mod reader;
pub mod release;
pub mod rows;
pub mod steady;
pub mod value;
pub mod verify_method;

pub use ddir::{Ddir, Pattern};
pub use optdef::{opt, Category, Kind, OptDef, Support, TimeUnit};
pub use release::FioRelease;
