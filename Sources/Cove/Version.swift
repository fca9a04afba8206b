// The library's version, kept equal to the COVE_VERSION_ macros of include/cove.h (a test
// compares them).
@_exported import CoveCore

/// Cove's version.
public enum CoveVersion {
    public static let major = 0
    public static let minor = 1
    public static let patch = 0
    /// major * 1000000 + minor * 1000 + patch, as COVE_VERSION_NUMBER.
    public static let number = major * 1_000_000 + minor * 1_000 + patch
    /// "major.minor.patch", as COVE_VERSION_STRING.
    public static let string = "\(major).\(minor).\(patch)"
}
