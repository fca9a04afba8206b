// The schema record of the catalog: the schema version, then the schema with its keys in the
// catalog JSON form (`Schema.catalogJSON()`), so a reopened file finds its tables and columns by
// key, and a schema given at open can be compared with the file's.
import CoveStorage

/// The schema a file holds, with its version.
package struct SchemaRecord {
    package var version: UInt64
    package var schema: Schema

    package init(version: UInt64, schema: Schema) {
        self.version = version
        self.schema = schema
    }

    ///     u64 schema version | UTF-8 JSON of Schema.catalogJSON()
    package func encoded() -> [UInt8] {
        var out: [UInt8] = []
        withUnsafeBytes(of: version.littleEndian) { out.append(contentsOf: $0) }
        out.append(contentsOf: Array(schema.catalogJSON().serialized().utf8))
        return out
    }

    package static func decode(_ bytes: [UInt8]) throws(CoveError) -> SchemaRecord {
        guard bytes.count > 8 else { throw CoveError(.corrupt, "the file's schema record is \(bytes.count) bytes long") }
        var version: UInt64 = 0
        for i in 0..<8 { version |= UInt64(bytes[i]) << (8 * UInt64(i)) }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: Array(bytes[8...]))
        } catch {
            throw CoveError(.corrupt, "the file's schema record does not parse: \(error.message)")
        }
        do {
            return SchemaRecord(version: version, schema: try Schema(catalog: json))
        } catch {
            throw CoveError(.corrupt, "the file's schema record is invalid: \(error.message)")
        }
    }
}
