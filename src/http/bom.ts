// Apart from codec.ts so that reading a JSON file (the CLI's --limits) does not load MessagePack.

/**
 * Text without a leading U+FEFF: a UTF-8 byte-order mark, which Windows tools (Notepad,
 * PowerShell's UTF8 encoding, .NET's default UTF-8 writer) put before JSON and JSON.parse refuses.
 */
export function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
