// cove-sync-server: `serve` runs the server, `migrate` makes its tables, `token` makes a bearer
// token for a user. Each reads the configuration file (--config) and takes flags that replace its
// fields. A failure prints a message naming the problem and exits non-zero.
import ArgumentParser
import CoveSyncServer
import Foundation
import Logging

@main
struct SyncServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cove-sync-server",
        abstract: "The server Cove files sync with, its data in PostgreSQL.",
        discussion: "docs/SYNC.md describes the configuration file, the protocol and the tables.",
        subcommands: [Serve.self, Migrate.self, Token.self])
}

/// The options every subcommand takes.
struct ConfigOptions: ParsableArguments {
    @Option(help: "The configuration file (JSON).") var config: String
    @Option(help: "The address to listen on, host:port (replaces the file's listen).") var listen: String?
    @Option(help: "The PostgreSQL URL (replaces the file's database).") var database: String?
    @Option(help: "The least severe log level written (replaces the file's log_level).") var logLevel: String?

    /// The file's settings with the flags applied, checked.
    func load() throws -> ServerConfig {
        do {
            var c = try ServerConfig.load(config)
            if let listen { c.listen = listen }
            if let database { c.database = database }
            if let logLevel { c.logLevel = logLevel }
            try c.validate()
            return c
        } catch {
            throw fail("\(error)")
        }
    }

    func logger(_ c: ServerConfig) -> Logger {
        var logger = Logger(label: "cove-sync-server")
        logger.logLevel = Logger.Level(rawValue: c.logLevel.lowercased()) ?? .info
        return logger
    }
}

/// Prints `message` on standard error and makes the exit status 1.
func fail(_ message: String) -> ExitCode {
    FileHandle.standardError.write(Data("cove-sync-server: \(message)\n".utf8))
    return ExitCode(1)
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the server: migrate the tables, then listen.")
    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let c = try options.load()
        let logger = options.logger(c)
        let (host, port) = try c.listenAddress()
        let server = SyncServer(database: SyncDatabase(url: try DatabaseURL(c.database), schema: try c.serverSchema(), rules: try c.serverRules(), logger: logger),
                                tokens: await TokenAuthority(secret: c.tokenSecret), logger: logger)
        let app = server.application(host: host, port: port) { bound in
            logger.info("listening", metadata: ["address": "\(host):\(bound)"])
        }
        do {
            try await app.runService()
        } catch {
            throw fail("\(error)")
        }
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Make the server's tables in the database, or check them.")
    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let c = try options.load()
        let database = SyncDatabase(url: try DatabaseURL(c.database), schema: try c.serverSchema(), rules: try c.serverRules(), logger: options.logger(c))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await database.client.run() }
            defer { group.cancelAll() }
            do {
                try await database.migrate()
            } catch {
                throw fail("cannot migrate the database: \(String(reflecting: error))")
            }
            print("the database's sync tables are ready")
        }
    }
}

struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print a bearer token for a user.")
    @OptionGroup var options: ConfigOptions
    @Option(help: "The user the token is for.") var user: String
    @Option(help: "Days the token lasts (default: the file's token_days).") var days: Int?

    func run() async throws {
        let c = try options.load()
        let days = days ?? c.tokenDays
        guard days >= 1 else { throw fail("--days is \(days): it must be at least 1") }
        do {
            print(try await TokenAuthority(secret: c.tokenSecret).token(for: user, days: days))
        } catch {
            throw fail("\(error)")
        }
    }
}
