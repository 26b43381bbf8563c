import { describe, expect, it } from 'vitest';
import { attachmentDisposition, contentTypeFor, safeFileName } from './task-files';

describe('downloaded file names', () => {
  it('keeps the last path segment, without control characters, quotes or leading dots', () => {
    expect(safeFileName('report.csv')).toBe('report.csv');
    expect(safeFileName('../../etc/passwd')).toBe('passwd');
    expect(safeFileName('C:\\Users\\x\\evil.exe')).toBe('evil.exe');
    expect(safeFileName('a"b\r\nc.txt')).toBe('a_b__c.txt');
    expect(safeFileName('.hidden')).toBe('hidden');
    expect(safeFileName('..')).toBe('download');
    expect(safeFileName('')).toBe('download');
    expect(safeFileName('x'.repeat(500))).toHaveLength(200);
  });

  it('types a file by its extension, unknown ones as octet-stream', () => {
    expect(contentTypeFor('a.PDF')).toBe('application/pdf');
    expect(contentTypeFor('a.csv')).toBe('text/csv');
    expect(contentTypeFor('a.exe')).toBe('application/octet-stream');
    expect(contentTypeFor('noext')).toBe('application/octet-stream');
  });

  it('writes an attachment disposition a header can carry, UTF-8 name in filename*', () => {
    expect(attachmentDisposition('rapport été.pdf')).toBe(`attachment; filename="rapport _t_.pdf"; filename*=UTF-8''rapport%20%C3%A9t%C3%A9.pdf`);
  });
});
