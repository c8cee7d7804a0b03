/** The forms the video callbacks' old check let through, and the IPv4 notations the URL parser normalises. */
export const ISSUE_URLS = [
  'https://[::127.0.0.1]/',
  'https://[64:ff9b::a9fe:a9fe]/',
  'https://[2002:a9fe:a9fe::]/',
  'https://[fec0::1]/',
  'https://[::ffff:0:127.0.0.1]/',
  'https://[64:ff9b:1::a00:1]/',
  'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
  'https://2130706433/',
  'https://0x7f.1/',
  'https://017700000001/',
  'https://localhost/',
  'https://api.localhost/',
];
