"""PyTorch's word_language_model example in our own words, small, on a short text written
to train/valid/test files: a Dictionary and Corpus that read a file word by word with an
<eos> per line, batchify and get_batch over bptt rows; an RNNModel (nn.Embedding,
getattr(nn, 'LSTM')(ninp, nhid, nlayers, dropout=...), nn.Dropout, a Linear decoder with
tied weights, init_hidden from weight.new_zeros, hidden states detached between batches)
and a TransformerModel subclassing nn.Transformer (a PositionalEncoding buffer, the
square subsequent mask as torch.log(torch.tril(...)), only its encoder used); the
example's training step: nn.NLLLoss of F.log_softmax, clip_grad_norm_, and a manual SGD
update p.data.add_(p.grad, alpha=-lr); the learning rate divided by 4 when the validation
loss stops falling; the best model saved whole with torch.save(model, f) and loaded back
with torch.load(f, weights_only=False), flatten_parameters(), then the test loss. Both
variants run, one after the other; `import torch.onnx` stands at the top as in the
example."""
import argparse
import math
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.onnx

TEXT = """the river runs past the mill and the mill turns all day
the miller sleeps when the river sleeps and wakes when it wakes
in spring the river is loud and the wheel turns fast
in summer the river is low and the wheel turns slow
the children fish below the mill and the miller shouts at them
the children run and the miller laughs and the river runs on
in autumn the leaves come down the river and catch on the wheel
the miller pulls them off with a long pole and swears at the trees
in winter the river freezes and the wheel stands still
the miller sits by the fire and waits for the spring
"""


# ---- data.py ----

class Dictionary:
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus:
    def __init__(self, path):
        self.dictionary = Dictionary()
        self.train = self.tokenize(os.path.join(path, 'train.txt'))
        self.valid = self.tokenize(os.path.join(path, 'valid.txt'))
        self.test = self.tokenize(os.path.join(path, 'test.txt'))

    def tokenize(self, path):
        """A file's words as one LongTensor of ids, <eos> at each line's end."""
        with open(path, encoding="utf8") as f:
            idss = []
            for line in f:
                words = line.split() + ['<eos>']
                idss.append(torch.tensor([self.dictionary.add_word(w) for w in words],
                                         dtype=torch.int64))
        return torch.cat(idss)


# ---- model.py ----

class RNNModel(nn.Module):
    """An encoder, a recurrent module and a decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError('When using the tied flag, nhid must be equal to emsize')
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == 'LSTM':
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


class PositionalEncoding(nn.Module):
    """Sines and cosines of the position at geometric frequencies, added to the input."""

    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float()
                             * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe.unsqueeze(0).transpose(0, 1))

    def forward(self, x):
        return self.dropout(x + self.pe[:x.size(0), :])


class TransformerModel(nn.Transformer):
    """nn.Transformer's encoder, a positional encoding and a decoder to the vocabulary."""

    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                                               num_encoder_layers=nlayers,
                                               num_decoder_layers=1, dropout=dropout)
        self.model_type = 'Transformer'
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        self.init_weights()

    def _generate_square_subsequent_mask(self, sz):
        return torch.log(torch.tril(torch.ones(sz, sz)))

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, src, has_mask=True):
        if has_mask:
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                self.src_mask = self._generate_square_subsequent_mask(len(src)).to(src.device)
        else:
            self.src_mask = None
        src = self.pos_encoder(self.input_emb(src) * math.sqrt(self.ninp))
        output = self.decoder(self.encoder(src, mask=self.src_mask))
        return F.log_softmax(output, dim=-1)


# ---- main.py ----

parser = argparse.ArgumentParser(description='A word-level language model, small')
parser.add_argument('--emsize', type=int, default=16)
parser.add_argument('--nhid', type=int, default=16)
parser.add_argument('--nlayers', type=int, default=2)
parser.add_argument('--lr', type=float, default=5)
parser.add_argument('--clip', type=float, default=0.25)
parser.add_argument('--epochs', type=int, default=3)
parser.add_argument('--batch_size', type=int, default=2, metavar='N')
parser.add_argument('--bptt', type=int, default=6)
parser.add_argument('--dropout', type=float, default=0.2)
parser.add_argument('--tied', action='store_true', default=True)
parser.add_argument('--seed', type=int, default=1111)
parser.add_argument('--log-interval', type=int, default=3, metavar='N')
parser.add_argument('--nhead', type=int, default=2)
args = parser.parse_args()

use_accel = torch.accelerator.is_available()
device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
print("Using device:", device)

data_dir = tempfile.mkdtemp()
lines = TEXT.splitlines(keepends=True)
for name, part in (('train.txt', lines[:7]), ('valid.txt', lines[7:9]), ('test.txt', lines[9:])):
    with open(os.path.join(data_dir, name), 'w', encoding='utf8') as f:
        f.writelines(part)
corpus = Corpus(data_dir)
print(len(corpus.dictionary), 'words;', len(corpus.train), len(corpus.valid), len(corpus.test))


def batchify(data, bsz):
    """The ids cut into bsz columns, the leftover dropped."""
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous().to(device)


eval_batch_size = 2
train_data = batchify(corpus.train, args.batch_size)
val_data = batchify(corpus.valid, eval_batch_size)
test_data = batchify(corpus.test, eval_batch_size)
ntokens = len(corpus.dictionary)


def repackage_hidden(h):
    """Hidden states cut from the history of the batches before."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i):
    seq_len = min(args.bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


def evaluate(model, data_source):
    model.eval()
    total_loss = 0.
    if model_type != 'Transformer':
        hidden = model.init_hidden(eval_batch_size)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, args.bptt):
            data, targets = get_batch(data_source, i)
            if model_type == 'Transformer':
                output = model(data).view(-1, ntokens)
            else:
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


def train(model, epoch, lr):
    model.train()
    total_loss = 0.
    if model_type != 'Transformer':
        hidden = model.init_hidden(args.batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        if model_type == 'Transformer':
            output = model(data).view(-1, ntokens)
        else:
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()
        if batch % args.log_interval == 0:
            cur_loss = total_loss / (args.log_interval if batch else 1)
            batches = len(train_data) // args.bptt
            print(f'| epoch {epoch:3d} | {batch:5d}/{batches:5d} batches | lr {lr:02.2f} | '
                  f'grad norm {norm.item():.6f} | '
                  f'loss {cur_loss:5.4f} | ppl {math.exp(cur_loss):8.3f}')
            total_loss = 0


criterion = nn.NLLLoss()
for model_type in ('LSTM', 'Transformer'):
    torch.manual_seed(args.seed)
    if model_type == 'Transformer':
        model = TransformerModel(ntokens, args.emsize, args.nhead, args.nhid, args.nlayers,
                                 args.dropout).to(device)
    else:
        model = RNNModel(model_type, ntokens, args.emsize, args.nhid, args.nlayers,
                         args.dropout, args.tied).to(device)
    print(model_type, sum(p.numel() for p in model.parameters()), 'parameters')
    save = os.path.join(data_dir, f'model_{model_type}.pt')
    lr, best_val_loss = args.lr, None
    for epoch in range(1, args.epochs + 1):
        train(model, epoch, lr)
        val_loss = evaluate(model, val_data)
        print(f'| end of epoch {epoch:3d} | valid loss {val_loss:5.4f} | '
              f'valid ppl {math.exp(val_loss):8.3f}')
        if not best_val_loss or val_loss < best_val_loss:
            with open(save, 'wb') as f:
                torch.save(model, f)
            best_val_loss = val_loss
        else:
            lr /= 4.0  # no better on the validation text: anneal
    with open(save, 'rb') as f:
        model = torch.load(f, weights_only=False)
        if model_type in ['RNN_TANH', 'RNN_RELU', 'LSTM', 'GRU']:
            model.rnn.flatten_parameters()
    test_loss = evaluate(model, test_data)
    print(f'| End of training | test loss {test_loss:5.4f} | test ppl {math.exp(test_loss):8.3f}')
