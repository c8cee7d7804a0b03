import type { ConfigBundle, Survivor } from '../../brain/index.js';
import type { TenantId } from '../identity/types.js';

declare const brand: unique symbol;
export type ServerId = number & { readonly [brand]: 'ServerId' };
export type ServerKeyId = number & { readonly [brand]: 'ServerKeyId' };
export type CheckoutId = number & { readonly [brand]: 'CheckoutId' };

export interface ServerRecord {
  id: ServerId;
  tenantId: TenantId;
  name: string;
  createdAt: string;
}

export interface ServerKeyRecord {
  id: ServerKeyId;
  serverId: ServerId;
  /** The first characters of the key, so an operator can tell keys apart; never the key. */
  preview: string;
  createdAt: string;
  revokedAt: string | null;
}

/** The resolved owner of a server key, as the sidecar routes need it on every request. */
export interface KeyOwner {
  keyId: ServerKeyId;
  serverId: ServerId;
  tenantId: TenantId;
}

/** Spec 001 §2.3. */
export interface ConfigVersion {
  version: number;
  publishedAt: string;
  publishedBy: string;
  note: string;
}

export interface PublishedBundle {
  bundle: ConfigBundle;
  entry: ConfigVersion;
}

export type PublishResult =
  | { ok: true; published: PublishedBundle }
  | { ok: false; reason: 'version_conflict'; head: number }
  | { ok: false; reason: 'no_server' };
export type RollbackResult = { ok: true; published: PublishedBundle } | { ok: false; reason: 'no_version' | 'no_server' };

export interface TelemetryEvent {
  kind: string;
  count: number;
}

/** A telemetry report after validation (spec 001 §2.2 plus the documented optional fields). */
export interface TelemetryReport {
  serverId: string;
  ts: string;
  botCount: number;
  playersOnline: number;
  linesSpoken: number;
  spendUsd: number;
  events: TelemetryEvent[];
  reportId?: string;
  llmTokens?: number;
  ttsCharacters?: number;
  cacheHits?: number;
  latency?: { p50: number; p99: number };
  roster?: Survivor[];
  /** The live map's sample: characters with positions (docs/controlplane.md, "The live map"). */
  map?: MapEntry[];
  economy?: { ttsUsd: number; llmUsd: number };
  /** Where the sidecar's lines come from: a model (named), the built-in demo lines, or none. */
  dialogue?: DialogueSource;
}

/** One character of a live map sample: its roster row, squad (when it has one), position (metres) and health. */
export interface MapEntry extends Survivor {
  squad?: string;
  x: number;
  z: number;
  health?: number;
}

/** The latest live map sample of a server. */
export interface MapSample {
  /** The sample's moment: its report's `ts` (UTC), and the same in epoch milliseconds. */
  ts: string;
  atMs: number;
  /** When the control plane received it (epoch ms). */
  receivedAt: number;
  characters: MapEntry[];
}

/** Where a sidecar's spoken lines come from, as its reports say. */
export interface DialogueSource {
  source: 'model' | 'demo' | 'none';
  /** The model's name, with source 'model' (SERVICE_LLM_MODEL), when the sidecar knows it. */
  model?: string;
}

export const DIALOGUE_SOURCES = ['model', 'demo', 'none'] as const;

/** One report as the store keeps it: the validated body, its server and when it arrived (ms). */
export interface TelemetryRecord {
  serverId: ServerId;
  receivedAt: number;
  report: TelemetryReport;
}

/**
 * A report with its signature's entry in the replay record the replicas share (the unix second
 * it was signed for and the signature's slot): stored only when the signature is new there, in
 * the statement that records it (ControlPlaneStore.ingestSigned).
 */
export interface SignedRecord extends TelemetryRecord {
  signature: { ts: number; slot: number };
}

export interface IngestOutcome {
  /** False when the report's reportId was already stored for this server. */
  accepted: boolean;
  /** Telemetry event entries stored (0 for a duplicate). */
  received: number;
}

export interface LatestReport {
  receivedAt: number;
  ts: string;
  botCount: number;
  playersOnline: number;
  /**
   * The tick latency last reported, from the latest of the server's last LATENCY_LOOKBACK
   * reports that carried one (a report of a quiet interval, with no ticks, has none); null
   * when none did.
   */
  latencyP50: number | null;
  latencyP99: number | null;
  /** When that report came in (epoch ms). */
  latencyAt: number | null;
  /** Where the sidecar's lines come from, from the latest report that said (null before any did). */
  dialogue: DialogueSource | null;
}

/** How many of a server's latest reports are searched for the last known tick latency. */
export const LATENCY_LOOKBACK = 2000;

export interface ActivityEvent {
  id: number;
  serverId: string;
  kind: string;
  count: number;
  /** The timestamp of the report that carried the event. */
  ts: string;
}

/** Sums of the usage aggregates over a range of UTC days. */
export interface UsageTotals {
  reports: number;
  linesSpoken: number;
  llmTokens: number;
  ttsCharacters: number;
  spendUsd: number;
  cacheHits: number;
  ttsUsd: number;
  llmUsd: number;
}

export interface DailyUsage extends UsageTotals {
  /** YYYY-MM-DD (UTC). */
  day: string;
}

export type CheckoutStatus = 'open' | 'complete' | 'expired';

export interface CheckoutRecord {
  id: CheckoutId;
  tenantId: TenantId;
  provider: string;
  providerRef: string;
  status: CheckoutStatus;
  url: string;
  plan: string;
  tier: string | null;
  amountUsd: number;
  interval: string;
  createdAt: string;
  completedAt: string | null;
}
