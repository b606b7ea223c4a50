// Declarations for probe-services.mjs (plain JavaScript, run by scripts/test.mjs before any build).
export declare const PG_URL: string;
export declare const REDIS_URL: string;
export declare const CHROMIUM_PATH: string;
export declare const SERVICES: readonly string[];
export declare function defaultPgUser(): void;
export declare function where(name: string): string;
export declare function probe(name: string): Promise<string | null>;
export declare function probeAll(names?: readonly string[]): Promise<Record<string, string | null>>;
