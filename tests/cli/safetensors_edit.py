"""tests/cli/safetensors_edit.py — reads and writes safetensors files as qkv does, with the
content checksum qkv writes (CRC32C, framework/safetensors.h), so that tests can craft files whose
checksum is right and whose content is not. Tensors stay raw bytes.

    python3 tests/cli/safetensors_edit.py FILE meta KEY VALUE       # set a metadata string
    python3 tests/cli/safetensors_edit.py FILE option KEY JSON      # set a key of the 'options' JSON
    python3 tests/cli/safetensors_edit.py FILE drop-meta KEY
    python3 tests/cli/safetensors_edit.py FILE drop-tensor NAME
    python3 tests/cli/safetensors_edit.py FILE copy-tensor FROM TO  # a tensor under a new name

A VALUE or JSON of the form @PATH is read from that file (an argument is at most 128 KB).
"""
import json
import struct
import sys

CHECKSUM_KEY = "qkv_crc32c"


def _crc_table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
        table.append(crc)
    return table


_TABLE = _crc_table()


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = (crc >> 8) ^ _TABLE[(crc ^ b) & 0xFF]
    return crc ^ 0xFFFFFFFF


def _literal(text):
    out = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == '\\':
            out.append('\\\\')
        elif ord(ch) < 0x20:
            out.append('\\u%04x' % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return ''.join(out)


def _header(metadata, tensors):
    """The header text qkv writes (unpadded), tensors in name order."""
    parts = []
    if metadata:
        parts.append('"__metadata__":{' + ','.join(_literal(k) + ':' + _literal(metadata[k]) for k in sorted(metadata)) + '}')
    offset = 0
    for name in sorted(tensors):
        dtype, shape, data = tensors[name]
        parts.append(_literal(name) + ':{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}' % (
            dtype, ','.join(str(d) for d in shape), offset, offset + len(data)))
        offset += len(data)
    return '{' + ','.join(parts) + '}'


def read(path):
    raw = open(path, 'rb').read()
    n = struct.unpack('<Q', raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    metadata = header.pop('__metadata__', {})
    tensors = {name: (e['dtype'], e['shape'], data[e['data_offsets'][0]:e['data_offsets'][1]]) for name, e in header.items()}
    return metadata, tensors


def write(path, metadata, tensors, checksum=True):
    metadata = {k: v for k, v in metadata.items() if k != CHECKSUM_KEY}
    if checksum:
        crc = crc32c(_header(metadata, tensors).encode())
        for name in sorted(tensors):
            crc = crc32c(tensors[name][2], crc)
        metadata[CHECKSUM_KEY] = '%08x' % crc
    head = _header(metadata, tensors).encode()
    head += b' ' * (-len(head) % 8)
    data = b''.join(tensors[name][2] for name in sorted(tensors))
    open(path, 'wb').write(struct.pack('<Q', len(head)) + head + data)


def main(argv):
    path, action, args = argv[1], argv[2], argv[3:]
    args = [open(a[1:], encoding='utf-8').read() if a.startswith('@') else a for a in args]
    metadata, tensors = read(path)
    if action == 'meta':
        metadata[args[0]] = args[1]
    elif action == 'option':
        options = json.loads(metadata['options'])
        options[args[0]] = json.loads(args[1])
        metadata['options'] = json.dumps(options, separators=(',', ':'))
    elif action == 'drop-meta':
        del metadata[args[0]]
    elif action == 'drop-tensor':
        del tensors[args[0]]
    elif action == 'copy-tensor':
        tensors[args[1]] = tensors[args[0]]
    else:
        sys.exit('safetensors_edit: unknown action ' + action)
    write(path, metadata, tensors)


if __name__ == '__main__':
    main(sys.argv)
