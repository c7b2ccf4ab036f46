"""A small GPT trained by shardc from Python on windows of this script's text; the trained weights
go back into the PyTorch module. Run: /usr/bin/python3 examples/train_gpt.py"""
import torch
import torch.nn as nn
import shardc


class TinyGPT(nn.Module):
    def __init__(self, vocab=128, dim=64, seq=32, layers=2):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(seq, dim)
        layer = nn.TransformerEncoderLayer(dim, 4, 4 * dim, dropout=0.0, batch_first=True)
        self.blocks, self.head = nn.TransformerEncoder(layer, layers), nn.Linear(dim, vocab)

    def forward(self, idx):  # idx [batch, seq] -> logits [batch, seq, vocab]
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        causal = nn.Transformer.generate_square_subsequent_mask(idx.shape[1])
        return self.head(self.blocks(x, mask=causal))


torch.manual_seed(0)
windows = (torch.tensor(list(open(__file__, "rb").read())) % 128).unfold(0, 33, 7)
model = TinyGPT()
pef = shardc.compile(model, (windows[:16, :32],), loss="cross-entropy", lr=3e-3,
                     pef_name="tiny_gpt")  # out/tiny_gpt/tiny_gpt.pef
for r in pef.train({"idx": windows[:, :32], "labels": windows[:, 1:]}, epochs=8):
    if r["step"] % 12 == 0:
        print(f"step {r['step']:3d}  epoch {r['epoch'] + 1}  loss {r['loss']:.4f}")
model.load_state_dict(pef.state_dict())
