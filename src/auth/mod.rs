//! Authentication and authorization, in one home: what a credential may reach (`scope`, the
//! proofs the store demands), the configured tokens (`credentials`), what this server seals and
//! reads back without storing it (`seal`: OAuth's values and project tokens), the check of a
//! request's credential (`check`: a path token, a bearer token, an OAuth access token, a project
//! token), and the OAuth 2.1 authorization server (`oauth`). Its files sit in different bands
//! (ARCHITECTURE.md, "Bands"): the types the store depends on low, the check with the wire,
//! OAuth's endpoints with the other surfaces.

pub mod check;
pub mod credentials;
pub mod oauth;
pub mod scope;
pub mod seal;
