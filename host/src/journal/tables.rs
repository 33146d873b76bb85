//! The journal's redb tables. Every entry has a *stamp*: the time GRW saw
//! the change, in microseconds since the epoch, made strictly increasing,
//! so that a stamp is both the entry's key and its time.
//!
//! | table | key | value |
//! |---|---|---|
//! | `entries` | stamp | the [`Record`](super::record::Record), compressed, or a [`Textual`](super::record::Textual) entry |
//! | `objects` | object key, stamp | flags ([`FULL`], [`DELETED`]) |
//! | `kinds` | `group/Kind`, stamp | the entry's size in bytes |
//! | `namespaces` | namespace, stamp | nothing |
//! | `about` | object key, stamp | nothing: an Event about that object |
//! | `latest` | object key | [`Latest`]: its last version seen |
//! | `bases` | object key | its state when its older entries were dropped |
//! | `edges` | stamp | an edge that appeared or went ([`EdgeRecord`]) |
//! | `dictionaries` | dictionary id | the cache's dictionary packed entries need |
//! | `dictionaryUses` | dictionary id | how many entries and bases need it |
//! | `meta` | name | a number: `format`, `aliveUntil`, `first/<kind>`, `reach/<kind>`, `seen/<kind>`, `bytes/<kind>` |

use redb::TableDefinition;
use serde::{Deserialize, Serialize};

use crate::store::Writer;

pub(super) const ENTRIES: TableDefinition<u64, &[u8]> = TableDefinition::new("entries");
pub(super) const OBJECTS: TableDefinition<(&str, u64), u8> = TableDefinition::new("objects");
pub(super) const KINDS: TableDefinition<(&str, u64), u64> = TableDefinition::new("kinds");
pub(super) const NAMESPACES: TableDefinition<(&str, u64), ()> = TableDefinition::new("namespaces");
pub(super) const ABOUT: TableDefinition<(&str, u64), ()> = TableDefinition::new("about");
pub(super) const LATEST: TableDefinition<&str, &[u8]> = TableDefinition::new("latest");
pub(super) const BASES: TableDefinition<&str, &[u8]> = TableDefinition::new("bases");
pub(super) const EDGES: TableDefinition<u64, &[u8]> = TableDefinition::new("edges");
pub(super) const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
pub(super) const DICTIONARIES: TableDefinition<u64, &[u8]> = TableDefinition::new("dictionaries");
pub(super) const DICTIONARY_USES: TableDefinition<u64, u64> =
    TableDefinition::new("dictionaryUses");

/// The layout of the tables; a file of a newer one is not opened. 2:
/// entries may be packed ([`super::record::Packed`]); a file of format 1
/// is read as it is and written in format 2 from then on.
pub(super) const FORMAT: u64 = 2;

/// The entry holds a whole state (or, for a deletion, that there is none).
pub(super) const FULL: u8 = 1;
/// The entry is a deletion.
pub(super) const DELETED: u8 = 2;

/// The kind key of gap entries.
pub(super) const GAP_KIND: &str = "";

/// The kind key edges are counted under.
pub(super) const EDGE_KIND: &str = "~edges";

/// The kind key the dictionaries are counted under.
pub(super) const DICTIONARY_KIND: &str = "~dictionaries";

/// An object's last version the journal saw.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Latest {
    pub stamp: u64,
    pub resource_version: String,
    pub deleted: bool,
    /// Entries since its last whole state.
    pub chain: u32,
    /// When that version's entry keeps the object's text
    /// ([`super::record::Textual`]): which text, as the cache held it
    /// ([`super::write::identity`]). A delta follows it only from that
    /// very text: the same version read again (a relist, a restart) may
    /// be another text of the same object.
    #[serde(default)]
    pub text: Option<u32>,
    /// Its `managedFields` summary: writer, time, hash of fields.
    #[serde(default)]
    pub managers: Vec<(Writer, u32, u64)>,
}

impl Latest {
    pub(super) fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    pub(super) fn decode(bytes: &[u8]) -> Option<Latest> {
        serde_json::from_slice(bytes).ok()
    }
}

/// An edge of the relationship index that appeared or went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdgeRecord {
    /// Object key of its `from` end.
    pub from: String,
    /// e.g. `owns`.
    pub relation: String,
    /// Object key of its `to` end.
    pub to: String,
    /// The analyzer that found it.
    pub analyzer: String,
    /// Appeared (`true`) or went.
    pub added: bool,
}
